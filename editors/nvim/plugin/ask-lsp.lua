if vim.g.loaded_ask_lsp then
  return
end
vim.g.loaded_ask_lsp = true

local t = require('ask-lsp.i18n').t

local function complete(arglead, cmdline)
  return require('ask-lsp.commands').complete(arglead, cmdline)
end

vim.api.nvim_create_user_command('AskLsp', function(args)
  require('ask-lsp.commands').run(args)
end, {
  nargs = '*',
  complete = complete,
  desc = t('command.desc'),
})

-- Deprecated: :Ask collides with other plugins' commands; removed after 0.2.
vim.api.nvim_create_user_command('Ask', function(args)
  vim.notify_once(t('command.deprecated'), vim.log.levels.WARN)
  require('ask-lsp.commands').run(args)
end, { nargs = '?', complete = complete, desc = t('command.alias_desc') })

require('ask-lsp.highlights').setup()
-- :colorscheme clears highlights, default links included.
vim.api.nvim_create_autocmd('ColorScheme', {
  group = vim.api.nvim_create_augroup('ask-lsp.highlights', {}),
  callback = function()
    require('ask-lsp.highlights').setup()
  end,
})
