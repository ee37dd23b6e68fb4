-- Child Neovim for spec.lua: no plugin, only `vim.lsp.enable('ask_lsp')`
-- with ask-lsp on $PATH (the parent sets PATH and ASK_LSP_URL). Answers the
-- question shown through showMessageRequest with "SQLite", waits until the
-- simulated server has it, and prints what it saw as JSON on its last line.
local root, workdir = assert(arg[1], 'repository root'), assert(arg[2], 'scratch dir')
local SIM = assert(os.getenv('ASK_LSP_URL'), 'ASK_LSP_URL')
-- Only the plugin's lsp/ directory is needed; plugin/ is not sourced and
-- nothing of require('ask-lsp') is loaded.
vim.opt.rtp:prepend(root .. '/editors/nvim')

local shown
vim.ui.select = function(items, opts, on_choice)
  shown = { prompt = opts.prompt, kind = opts.kind, titles = vim.tbl_map(function(a)
    return a.title
  end, items) }
  for _, item in ipairs(items) do
    if item.title == 'SQLite' then
      return on_choice(item)
    end
  end
  on_choice(nil)
end

local function http(method, path, body)
  local cmd = { 'curl', '-s', '-m', '5', '-X', method, SIM .. path, '-H', 'content-type: application/json' }
  if body then
    vim.list_extend(cmd, { '-d', vim.json.encode(body) })
  end
  return vim.json.decode(assert(vim.system(cmd, { text = true }):wait().stdout))
end

local function wait_for(condition, what)
  assert(vim.wait(15000, condition, 20), 'timed out waiting for ' .. what)
end

vim.lsp.enable('ask_lsp')
vim.cmd.edit(workdir .. '/notes.txt')
local client
wait_for(function()
  client = vim.lsp.get_clients({ name = 'ask_lsp', bufnr = 0 })[1]
  return client and client.initialized
end, 'ask_lsp to start and attach')
-- The question goes out once ask-lsp follows the server's events.
wait_for(function()
  local status = client:request_sync('workspace/executeCommand', { command = 'askLsp.status' }, 2000)
  return status and status.result and status.result.servers[1].connected
end, 'ask-lsp to connect')
local request = http('POST', '/_sim/ask', {
  questions = { { question = 'Which database?', header = 'Database',
    options = { { label = 'Postgres', description = 'Relational' }, { label = 'SQLite', description = 'Embedded' } } } },
})
wait_for(function()
  return #http('GET', '/_sim/log') > 0
end, 'the simulated server to receive the answer')
io.stdout:write(vim.json.encode({
  id = request.id,
  shown = shown,
  cmd = client.config.cmd,
  plugin_loaded = package.loaded['ask-lsp'] ~= nil or vim.g.loaded_ask_lsp ~= nil,
  clients = #vim.lsp.get_clients({ name = 'ask_lsp' }),
}) .. '\n')
client:stop(true)
