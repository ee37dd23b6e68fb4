-- Child Neovim for spec.lua: the plugin with no servers configured, so
-- ask-lsp follows the server registered in
-- $XDG_STATE_HOME/opencode/service.json (the parent writes it). Prints
-- :checkhealth ask-lsp's text as JSON on its last line.
local root = assert(arg[1], 'repository root')
local BIN = assert(os.getenv('ASK_LSP_BIN'), 'ASK_LSP_BIN')
vim.opt.rtp:prepend(root .. '/editors/nvim')
vim.cmd.runtime('plugin/ask-lsp.lua')
require('ask-lsp').setup({ cmd = { BIN } })
assert(vim.wait(15000, function()
  local status = require('ask-lsp.client').status
  return status.servers and #status.servers == 1 and status.servers[1].connected
end, 20), 'timed out waiting for ask-lsp to connect')
vim.cmd('checkhealth ask-lsp')
local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
io.stdout:write(vim.json.encode({ health = text }) .. '\n')
vim.cmd('qa!')
