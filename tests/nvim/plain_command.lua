-- Child Neovim for spec.lua: no setup{}, editors/nvim on 'runtimepath' with
-- its plugin/ sourced (so :AskLsp exists), ask-lsp through
-- `vim.lsp.enable('ask_lsp')`. :AskLsp must talk to that client and never
-- start a second one; prints what it saw as JSON on its last line.
local root, workdir = assert(arg[1], 'repository root'), assert(arg[2], 'scratch dir')
vim.opt.rtp:prepend(root .. '/editors/nvim')
vim.cmd.runtime('plugin/ask-lsp.lua')

local said = {}
vim.notify = function(message)
  table.insert(said, message)
end
local function clients()
  return { plugin = #vim.lsp.get_clients({ name = 'ask-lsp' }), plain = #vim.lsp.get_clients({ name = 'ask_lsp' }) }
end
local function wait_for(condition, what)
  assert(vim.wait(15000, condition, 20), 'timed out waiting for ' .. what)
end

-- Before any client: told how, nothing started.
vim.cmd('AskLsp list')
local before = { said = said[#said], clients = clients() }
vim.wait(300)
before.later = clients()

vim.lsp.enable('ask_lsp')
vim.cmd.edit(workdir .. '/notes.txt')
wait_for(function()
  local client = vim.lsp.get_clients({ name = 'ask_lsp', bufnr = 0 })[1]
  return client and client.initialized
end, 'ask_lsp to start and attach')
wait_for(function()
  said = {}
  vim.cmd('AskLsp status')
  return said[1] and said[1]:find(': connected', 1, true) ~= nil
end, ':AskLsp status to report the connected server')
local status = said[1]
said = {}
vim.cmd('AskLsp list')
vim.wait(300)
io.stdout:write(vim.json.encode({
  before = before,
  status = status,
  list = said[1],
  clients = clients(),
}) .. '\n')
vim.lsp.get_clients({ name = 'ask_lsp' })[1]:stop(true)
