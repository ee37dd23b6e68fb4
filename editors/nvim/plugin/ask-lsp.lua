if vim.g.loaded_ask_lsp then
  return
end
vim.g.loaded_ask_lsp = true

vim.api.nvim_create_user_command('Ask', function(args)
  require('ask-lsp.commands').run(args)
end, {
  nargs = '?',
  complete = function(arglead)
    return require('ask-lsp.commands').complete(arglead)
  end,
  desc = 'ask-lsp: list, answer, reject pending agent questions; status; start',
})
