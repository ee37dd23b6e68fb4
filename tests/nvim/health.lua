-- Child Neovim for spec.lua: the plugin set up with no servers at all, so
-- ask-lsp falls back to $ASK_LSP_URL; prints the :checkhealth text as JSON.
local root = assert(arg[1], 'repository root')
local BIN = assert(os.getenv('ASK_LSP_BIN'), 'ASK_LSP_BIN')
vim.opt.rtp:prepend(root .. '/editors/nvim')
vim.cmd.runtime('plugin/ask-lsp.lua')
require('ask-lsp').setup({ cmd = { BIN } })
assert(vim.wait(15000, function()
  local servers = require('ask-lsp.client').status.servers or {}
  return servers[1] and servers[1].connected
end, 20), 'ask-lsp to connect to the default server')
vim.cmd('checkhealth ask-lsp')
io.stdout:write(vim.json.encode({ text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n') }) .. '\n')
require('ask-lsp.client').get():stop(true)
vim.cmd('qa!')
