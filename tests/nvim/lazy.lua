-- Child Neovim for spec.lua: installs the plugin the way lazy.nvim does for
-- a local spec `{ dir = <clone>/editors/nvim, name = 'ask-lsp', opts = … }`
-- (lazy.nvim itself cannot be installed here: it is on no package registry):
--   :Lazy build  loadfile('<dir>/build.lua')() (lazy's get_build_file)
--   load         'runtimepath' gets the dir, plugin/**/*.lua is sourced
--   opts         require('ask-lsp').setup(opts)
-- No :helptags is run: the committed doc/tags must do. ask-lsp is not on
-- $PATH. Prints what it saw as JSON on its last line.
local clone = assert(arg[1], 'clone of the repository')
local SIM = assert(os.getenv('ASK_SIM_URL'), 'ASK_SIM_URL')
local dir = clone .. '/editors/nvim'
assert(vim.fn.executable('ask-lsp') == 0, 'ask-lsp must not be on $PATH for this test')

local build_file = assert(loadfile(dir .. '/build.lua'))
build_file()

vim.opt.rtp:append(dir)
for _, file in ipairs(vim.fn.glob(dir .. '/plugin/**/*.lua', false, true)) do
  vim.cmd.source(file)
end

local ok_help, help_err = pcall(vim.cmd.help, 'ask-lsp')
local help = ok_help and { file = vim.fn.expand('%:t'), line = vim.api.nvim_get_current_line() } or { error = help_err }
vim.cmd.helpclose()

require('ask-lsp').setup({ servers = { { name = 'sim', url = SIM } } })
local client = require('ask-lsp.client')
local connected = vim.wait(15000, function()
  return client.status.servers and client.status.servers[1] and client.status.servers[1].connected
end, 20)
io.stdout:write(vim.json.encode({
  help = help,
  connected = connected,
  cmd = client.get() and client.get().config.cmd,
  binary = dir .. '/bin/ask-lsp',
}) .. '\n')
if client.get() then
  client.get():stop(true)
end
