if vim.g.loaded_ask_lsp then
  return
end
vim.g.loaded_ask_lsp = true

local function complete(arglead)
  return require('ask-lsp.commands').complete(arglead)
end

vim.api.nvim_create_user_command('AskLsp', function(args)
  require('ask-lsp.commands').run(args)
end, {
  nargs = '?',
  complete = complete,
  desc = 'ask-lsp: list, answer, reject pending agent questions; status; start; build',
})

-- Deprecated: :Ask collides with other plugins' commands; removed after 0.2.
vim.api.nvim_create_user_command('Ask', function(args)
  vim.notify_once(':Ask is deprecated: use :AskLsp', vim.log.levels.WARN)
  require('ask-lsp.commands').run(args)
end, { nargs = '?', complete = complete, desc = 'ask-lsp: deprecated alias of :AskLsp' })

require('ask-lsp.highlights').setup()
-- :colorscheme clears highlights, default links included.
vim.api.nvim_create_autocmd('ColorScheme', {
  group = vim.api.nvim_create_augroup('ask-lsp.highlights', {}),
  callback = function()
    require('ask-lsp.highlights').setup()
  end,
})
