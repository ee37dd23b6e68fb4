-- Child Neovim for spec.lua: installs the plugin the way lazy.nvim does for
-- the one-line spec `{ '<repository URL>', version = '*', main = 'ask-lsp',
-- opts = … }` (lazy.nvim itself is on no package registry):
--   clone + checkout of the newest tag   done by spec.lua (git, file://)
--   :Lazy build  loadfile('<dir>/build.lua')() (lazy's get_build_file)
--   load         'runtimepath' gets the dir, plugin/**/*.lua is sourced
--   opts         require(main).setup(opts)
-- ask-lsp is not on $PATH and cargo is a fake that records being run.
-- Prints what it saw as JSON on its last line.
local dir = assert(arg[1], 'the clone')
local url = assert(os.getenv('ASK_SIM_URL'), 'ASK_SIM_URL')
assert(vim.fn.executable('ask-lsp') == 0, 'ask-lsp must not be on $PATH for this test')

assert(loadfile(dir .. '/build.lua'))()

vim.opt.rtp:prepend(dir)
for _, file in ipairs(vim.fn.glob(dir .. '/plugin/**/*.lua', false, true)) do
  vim.cmd.source(file)
end

local ok_help, help_err = pcall(vim.cmd.help, 'ask-lsp')
local help = ok_help and vim.fn.expand('%:t') or help_err
pcall(vim.cmd.helpclose)

require('ask-lsp').setup({ servers = { { name = 'sim', url = url } } })
local client = require('ask-lsp.client')
local connected = vim.wait(15000, function()
  return client.status.servers and client.status.servers[1] and client.status.servers[1].connected
end, 20)
io.stdout:write(vim.json.encode({
  help = help,
  connected = connected,
  cmd = client.get() and client.get().config.cmd,
  commands = vim.fn.exists(':AskLsp') == 2,
}) .. '\n')
if client.get() then
  client.get():stop(true)
end
