-- The Neovim plugin in a real headless Neovim, against the real ask-lsp
-- binary and the simulated OpenCode server (started by run.sh). Every flow is
-- driven by keys or by the picker/input a person would use, and checked
-- against what the server received.
local root = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h')
vim.opt.rtp:prepend(root .. '/editors/nvim')
vim.cmd.runtime('plugin/ask-lsp.lua')

local SIM = assert(os.getenv('ASK_SIM_URL'), 'ASK_SIM_URL')
local LOCKED = assert(os.getenv('ASK_SIM_LOCKED_URL'), 'ASK_SIM_LOCKED_URL')
local BIN = assert(os.getenv('ASK_LSP_BIN'), 'ASK_LSP_BIN')
local PLAIN = assert(os.getenv('ASK_SIM_PLAIN_URL'), 'ASK_SIM_PLAIN_URL')

-- What the person is told, and the picker/input they use (stubs stand in
-- for telescope/dressing-style UIs).
local notified = {}
vim.notify = function(message, level)
  table.insert(notified, { message = message, level = level })
end
local picker = { seen = {}, choose = nil }
vim.ui.select = function(items, opts, on_choice)
  table.insert(picker.seen, { items = items, opts = opts })
  on_choice(picker.choose and picker.choose(items, opts) or nil)
end
local typed = { next = nil }
vim.ui.input = function(_, on_confirm)
  on_confirm(typed.next)
end

--- JSON with object keys sorted: a Lua table has no key order, and ask-lsp
--- shows a form's fields in the order the agent wrote them.
local function sorted_json(value)
  if type(value) ~= 'table' or next(value) == nil then
    return vim.json.encode(value)
  end
  if vim.islist(value) then
    return '[' .. table.concat(vim.tbl_map(sorted_json, value), ',') .. ']'
  end
  local keys = vim.tbl_keys(value)
  table.sort(keys)
  local parts = {}
  for _, key in ipairs(keys) do
    table.insert(parts, vim.json.encode(key) .. ':' .. sorted_json(value[key]))
  end
  return '{' .. table.concat(parts, ',') .. '}'
end

local function http(method, path, body, base)
  local cmd = { 'curl', '-s', '-m', '5', '-X', method, (base or SIM) .. path, '-H', 'content-type: application/json' }
  if body then
    vim.list_extend(cmd, { '-d', sorted_json(body) })
  end
  local out = vim.system(cmd, { text = true }):wait()
  assert(out.code == 0, 'curl failed: ' .. (out.stderr or ''))
  return vim.json.decode(out.stdout)
end

local function ask(questions, session)
  return http('POST', '/_sim/ask', { sessionID = session, questions = questions })
end

local function received(base)
  return http('GET', '/_sim/log', nil, base)
end

-- Generous: a busy machine (another build running) is not a failure.
local function wait_for(condition, what)
  if not vim.wait(30000, condition, 20) then
    error('timed out waiting for ' .. what, 2)
  end
end

local function float_win()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    local buf = vim.api.nvim_win_get_buf(win)
    if vim.bo[buf].filetype == 'ask-lsp' then
      return win, buf
    end
  end
end

local function float_text()
  local _, buf = float_win()
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
end

local function keys(s)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(s, true, false, true), 'mx', false)
end

--- Waits for the server to receive one more reply/reject; returns it.
local function next_received(before)
  wait_for(function()
    return #received() > before
  end, 'the server to receive an answer')
  local log = received()
  assert(#log == before + 1, 'exactly one answer expected: ' .. vim.inspect(log))
  return log[#log]
end

local function eq(expected, actual, what)
  if not vim.deep_equal(expected, actual) then
    error(('%s:\nexpected %s\n     got %s'):format(what or 'value', vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

local database = {
  { question = 'Which database?', header = 'Database',
    options = { { label = 'Postgres', description = 'Relational' }, { label = 'SQLite', description = 'Embedded' } } },
}
local checks = {
  { question = 'Which checks?', header = 'Checks', multiple = true,
    options = { { label = 'Unit', description = '' }, { label = 'Lint', description = '' }, { label = 'E2E', description = '' } } },
}

local tests = {}
local function test(name, fn)
  table.insert(tests, { name = name, fn = fn })
end

require('ask-lsp').setup({
  cmd = { BIN },
  servers = {
    { name = 'sim', url = SIM },
    { name = 'locked', url = LOCKED },
    -- The simulated server's sandbox-agent endpoint: forms (ACP elicitations).
    { name = 'acp', url = SIM, backend = 'sandbox-agent', serverId = 'nvim' },
  },
  -- The default mode, with a shorter wait: prompts open once no key came
  -- for 300 ms.
  focus = { mode = 'idle', idle_ms = 300 },
})

test('connects and reports its servers', function()
  wait_for(function()
    local status = require('ask-lsp.client').status
    local connected = {}
    for _, server in ipairs(status.servers or {}) do
      connected[server.name] = server.connected
    end
    return connected.sim and connected.acp and connected.locked == false
  end, 'the status notification')
end)

test('a lone single-select question goes through vim.ui.select', function()
  local before = #received()
  picker.choose = function(items)
    return items[3]
  end
  local request = ask(database)
  eq({ kind = 'reply', id = request.id, answers = { { 'SQLite' } } }, next_received(before), 'received')
  local shown = picker.seen[#picker.seen]
  -- Who asks, as the permission float says it.
  eq('[Database] Which database? — Session ' .. request.sessionID .. ' · server sim · /sim/project', shown.opts.prompt, 'picker prompt')
  local labels = vim.tbl_map(shown.opts.format_item, shown.items)
  eq({ 'Reject the question', 'Postgres — Relational', 'SQLite — Embedded', 'Other… (type an answer)' }, labels, 'picker items')
end)

test('Other… in the picker sends typed text', function()
  local before = #received()
  picker.choose = function(items)
    return items[4]
  end
  typed.next = '  MariaDB  '
  local request = ask(database)
  eq({ kind = 'reply', id = request.id, answers = { { 'MariaDB' } } }, next_received(before), 'received')
  picker.choose = nil
end)

test('a lone question left in the picker stays pending, and the person is told how to get back to it', function()
  local before = #received()
  picker.choose = nil
  local request = ask(database)
  wait_for(function()
    local last = notified[#notified]
    return last and last.message:find('still pending', 1, true)
  end, 'the hint')
  eq('ask-lsp: "Database" is still pending: :AskLsp answer shows it again, :AskLsp reject rejects it', notified[#notified].message, 'hint')
  vim.wait(200)
  eq(before, #received(), 'nothing sent')
  vim.cmd('AskLsp reject')
  eq({ kind = 'reject', id = request.id }, next_received(before), 'received')
end)

test('two single-select questions: picking on the last one waits for <CR>; the float says who asks', function()
  local before = #received()
  local cache = { { question = 'Which cache?', header = 'Cache',
    options = { { label = 'Redis', description = '' }, { label = 'None', description = '' } } } }
  local request = ask(vim.list_extend(vim.deepcopy(database), cache))
  wait_for(float_win, 'the float')
  assert(float_text():find('Session ' .. request.sessionID .. ' · server sim · /sim/project', 1, true), float_text())
  keys('1')
  assert(float_text():find('Question 2/2 · Cache', 1, true), float_text())
  keys('2')
  assert(float_text():find('Question 2/2 · Cache', 1, true) and float_text():find('(•) None', 1, true), float_text())
  vim.wait(200)
  eq(before, #received(), 'nothing sent before <CR>')
  keys('<CR>')
  eq({ kind = 'reply', id = request.id, answers = { { 'Postgres' }, { 'None' } } }, next_received(before), 'received')
end)

--- A second Neovim, driven like a person at a keyboard (nvim_input goes
--- through its real input loop), with the plugin set up against its own
--- simulated server (so this one's prompts stay out of the others' logs).
local FOCUS = assert(os.getenv('ASK_SIM_FOCUS_URL'), 'ASK_SIM_FOCUS_URL')
local function embedded(focus, extra, env)
  local chan = vim.fn.jobstart({ vim.v.progpath, '--embed', '--headless', '--clean' }, { rpc = true, env = env })
  local nvim = { chan = chan }
  function nvim.lua(code, ...)
    return vim.rpcrequest(chan, 'nvim_exec_lua', code, { ... })
  end
  function nvim.input(keys_)
    vim.rpcrequest(chan, 'nvim_input', keys_)
  end
  function nvim.state()
    return nvim.lua([[
      local float
      for _, win in ipairs(vim.api.nvim_list_wins()) do
        if vim.bo[vim.api.nvim_win_get_buf(win)].filetype == 'ask-lsp' then float = win end
      end
      local text = float and table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false), '\n')
      return { mode = vim.api.nvim_get_mode().mode, win = vim.api.nvim_get_current_win(), float = float, text = text,
        line = vim.api.nvim_buf_get_lines(_G.typing_buf, 0, -1, false), announced = _G.announced,
        statusline = require('ask-lsp').statusline(), notified = _G.notified }
    ]])
  end
  nvim.lua([[
    local root, bin, url, focus, extra = ...
    vim.opt.rtp:prepend(root .. '/editors/nvim')
    vim.cmd.runtime('plugin/ask-lsp.lua')
    _G.notified, _G.announced = {}, {}
    vim.notify = function(message) table.insert(_G.notified, message) end
    vim.api.nvim_create_autocmd('User', { pattern = 'AskLspPrompt', callback = function(ev)
      table.insert(_G.announced, ev.data.title)
    end })
    require('ask-lsp').setup(vim.tbl_extend('force', { cmd = { bin }, servers = { { name = 'focus', url = url } }, focus = focus }, extra))
    _G.typing_buf = vim.api.nvim_get_current_buf()
  ]], root, BIN, FOCUS, focus, extra or vim.empty_dict())
  wait_for(function()
    return nvim.lua([[local s = require('ask-lsp.client').status.servers return s and s[1] and s[1].connected]])
  end, 'the embedded Neovim to connect')
  return nvim
end

local function focus_ask(questions, session)
  return http('POST', '/_sim/ask', { sessionID = session, questions = questions }, FOCUS)
end

test('focus idle: a prompt arriving while typing in Insert mode is announced, takes no key, and opens once idle', function()
  local nvim = embedded({ mode = 'idle', idle_ms = 400 })
  local before = #received(FOCUS)
  local start = nvim.state()
  nvim.input('ihello')
  wait_for(function()
    return nvim.state().line[1] == 'hello'
  end, 'typing')
  local request = focus_ask(vim.list_extend(vim.deepcopy(database), vim.deepcopy(checks)), 'ses_nvim_typing')
  wait_for(function()
    return #nvim.state().announced > 0
  end, 'the announcement')
  -- Typing goes on, a key every 100 ms: never idle for 400 ms.
  for _, key in ipairs({ ' ', 'w', 'o', 'r', 'l', 'd' }) do
    nvim.input(key)
    vim.wait(100)
  end
  local seen = nvim.state()
  eq({ 'i', start.win, nil, { 'hello world' } }, { seen.mode, seen.win, seen.float, seen.line }, 'mode, window, float, typed text')
  eq({ 'Database (+1 more)' }, seen.announced, 'User AskLspPrompt')
  eq('? 1 question', seen.statusline, 'statusline')
  eq('ask-lsp: Database (+1 more) — waiting for you (:AskLsp answer)', seen.notified[#seen.notified], 'vim.notify')
  -- <Esc>, then idle in Normal mode: it opens, focused.
  nvim.input('<Esc>')
  wait_for(function()
    return nvim.state().float
  end, 'the float once idle')
  seen = nvim.state()
  eq(seen.float, seen.win, 'focused once idle')
  assert(seen.text:find('Question 1/2 · Database', 1, true), seen.text)
  nvim.input('2')
  nvim.input('13<CR>')
  eq({ kind = 'reply', id = request.id, answers = { { 'SQLite' }, { 'Unit', 'E2E' } } }, (function()
    wait_for(function()
      return #received(FOCUS) > before
    end, 'the answer')
    return received(FOCUS)[before + 1]
  end)(), 'received')
  eq({ 'hello world' }, nvim.state().line, 'the buffer as typed')
  vim.fn.jobstop(nvim.chan)
end)

test('focus unfocused: the float shows at once without the cursor; :AskLsp answer goes into it', function()
  local nvim = embedded({ mode = 'unfocused', idle_ms = 400 })
  local before = #received(FOCUS)
  local start = nvim.state()
  nvim.input('iabc')
  wait_for(function()
    return nvim.state().line[1] == 'abc'
  end, 'typing')
  local request = focus_ask(database, 'ses_nvim_unfocused')
  wait_for(function()
    return nvim.state().float
  end, 'the float')
  nvim.input('def')
  vim.wait(200)
  local seen = nvim.state()
  eq({ 'i', start.win, { 'abcdef' } }, { seen.mode, seen.win, seen.line }, 'mode, window, typed text')
  assert(seen.text:find('1. ( ) Postgres — Relational', 1, true), seen.text)
  eq(before, #received(FOCUS), 'nothing sent')
  nvim.input('<Esc>:AskLsp answer<CR>')
  wait_for(function()
    local now = nvim.state()
    return now.float and now.win == now.float
  end, 'the cursor in the float')
  nvim.input('2')
  wait_for(function()
    return #received(FOCUS) > before
  end, 'the answer')
  eq({ kind = 'reply', id = request.id, answers = { { 'SQLite' } } }, received(FOCUS)[before + 1], 'received')
  vim.fn.jobstop(nvim.chan)
end)

--- Whether `s` is whole UTF-8: no character cut in two.
local function whole_utf8(s)
  local i = 1
  while i <= #s do
    local c = s:byte(i)
    local n = c < 0x80 and 0 or c >= 0xF0 and 3 or c >= 0xE0 and 2 or c >= 0xC2 and 1 or nil
    if not n then
      return false
    end
    for j = i + 1, i + n do
      local b = s:byte(j)
      if not b or b < 0x80 or b > 0xBF then
        return false
      end
    end
    i = i + n + 1
  end
  return true
end

--- The initialize request ask-lsp read, from a copy of its stdin.
local function initialize_sent(log)
  local message
  wait_for(function()
    local file = io.open(log, 'rb')
    local text = file and file:read('*a') or ''
    if file then
      file:close()
    end
    local length, from = text:match('Content%-Length: (%d+)\r\n\r\n()')
    message = length and #text >= from + length - 1 and vim.json.decode(text:sub(from, from + tonumber(length) - 1))
    return message
  end, 'the initialize request in ' .. log)
  return message
end

--- Whether this ask-lsp takes initializationOptions.locale (#35's binary
--- does; one built before refuses the unknown field).
local function takes_locale()
  local body = vim.json.encode({ jsonrpc = '2.0', id = 1, method = 'initialize', params = {
    processId = vim.NIL, rootUri = vim.NIL, capabilities = vim.empty_dict(),
    initializationOptions = { servers = { { url = FOCUS } }, locale = 'zh-CN' } } })
  local out = {}
  local proc = vim.system({ BIN }, { stdin = true, stdout = function(_, data)
    table.insert(out, data or '')
  end })
  proc:write(('Content-Length: %d\r\n\r\n%s'):format(#body, body))
  wait_for(function()
    return table.concat(out):find('"id":1', 1, true) ~= nil
  end, 'ask-lsp to answer initialize')
  proc:kill('sigterm')
  return not table.concat(out):find('unknown field `locale`', 1, true)
end

test('zh-CN: setup{ locale } is sent to ask-lsp; the float speaks Chinese around CJK agent text that fits it; the choice reaches the server once', function()
  local log = os.tmpname()
  -- ask-lsp behind a tee: what Neovim wrote to it, byte for byte.
  local options = { ui = 'float', float = { max_width = 34 }, cmd = { 'sh', '-c', 'tee "$0" | exec "$1"', log, BIN } }
  local env
  if takes_locale() then
    options.locale = 'zh-CN'
  else
    -- Until the binary of #35 is merged: the plugin's language from $LANG
    -- (v:lang is "C" where the locale is not installed), nothing sent.
    io.stdout:write('     (this ask-lsp refuses initializationOptions.locale: zh-CN from $LANG instead)\n')
    env = { LANG = 'zh_CN.UTF-8' }
  end
  local nvim = embedded({ mode = 'now' }, options, env)
  local initialize = initialize_sent(log)
  eq('initialize', initialize.method, 'first message')
  eq(options.locale, initialize.params.initializationOptions.locale, 'initializationOptions.locale')
  eq(nil, initialize.params.locale, 'initialize.locale (Neovim 0.11.4 sends none)')
  local before = #received(FOCUS)
  local question = '你想在这个项目里使用哪一个数据库来保存用户的会话和偏好设置？'
  local option = '轻量级嵌入式数据库，不需要单独的服务进程'
  local request = focus_ask({ { question = question, header = '数据库',
    options = { { label = 'PostgreSQL', description = '关系型' }, { label = 'SQLite', description = option } } } }, 'ses_nvim_zh')
  wait_for(function()
    return nvim.state().float
  end, 'the float')
  local seen = nvim.lua([[
    local win = ...
    local buf = vim.api.nvim_win_get_buf(win)
    return { width = vim.api.nvim_win_get_width(win), lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false),
      statusline = require('ask-lsp').statusline() }
  ]], nvim.state().float)
  local text = table.concat(seen.lines, '\n')
  eq('问题 · 数据库', seen.lines[1], 'title line')
  for _, expected in ipairs({ '会话 ses_nvim_zh · 服务器 focus', 'c. 其他…（输入答案）', 'j/k 移动' }) do
    assert(text:find(expected, 1, true), expected .. ' in\n' .. text)
  end
  eq('? 1 个问题', seen.statusline, 'statusline')
  -- Agent text whole, as sent, across its lines; every line within the window.
  local joined = table.concat(seen.lines)
  assert(joined:find(question, 1, true) and joined:find(option, 1, true), text)
  for _, line in ipairs(seen.lines) do
    assert(vim.fn.strdisplaywidth(line) <= seen.width, ('line wider than the window (%d): %s'):format(seen.width, line))
    assert(whole_utf8(line), 'a character cut in two: ' .. line)
  end
  nvim.input('2')
  wait_for(function()
    return #received(FOCUS) > before
  end, 'the answer')
  vim.wait(300)
  eq({ { kind = 'reply', id = request.id, answers = { { 'SQLite' } } } }, vim.list_slice(received(FOCUS), before + 1), 'received once')
  vim.fn.jobstop(nvim.chan)
  vim.fn.delete(log)
end)

test('setup{ codex_homes } reaches ask-lsp: each home is followed as a server of its own', function()
  local home = vim.fn.tempname()
  vim.fn.mkdir(home, 'p')
  local nvim = embedded({ mode = 'now' }, { codex_homes = { home } })
  local socket = 'unix:' .. home .. '/app-server-control/app-server-control.sock'
  wait_for(function()
    return nvim.lua([[
      for _, server in ipairs(require('ask-lsp.client').status.servers or {}) do
        if server.url == ... then return true end
      end
      return false
    ]], socket)
  end, 'a status naming ' .. socket)
  vim.fn.jobstop(nvim.chan)
  vim.fn.delete(home, 'rf')
end)

test('multi-select in the float: number keys toggle, <CR> submits', function()
  local before = #received()
  local request = ask(checks)
  wait_for(float_win, 'the float')
  assert(float_text():find('[ ] Unit', 1, true), float_text())
  keys('13')
  assert(float_text():find('[x] E2E', 1, true), float_text())
  keys('<CR>')
  eq({ kind = 'reply', id = request.id, answers = { { 'Unit', 'E2E' } } }, next_received(before), 'received')
  wait_for(function()
    return float_win() == nil
  end, 'the float to close')
end)

test('two questions: pick, <Space>/j toggles, <Tab> between questions', function()
  local before = #received()
  local both = vim.list_extend(vim.deepcopy(database), checks)
  local request = ask(both)
  wait_for(float_win, 'the float')
  assert(float_text():find('Question 1/2 · Database', 1, true), float_text())
  keys('<Tab>')
  assert(float_text():find('Question 2/2 · Checks', 1, true), float_text())
  keys('<Space>j<Space><S-Tab>2')
  -- Picking in a single-select question moves on; the second has answers.
  assert(float_text():find('Question 2/2', 1, true), float_text())
  keys('<CR>')
  eq({ kind = 'reply', id = request.id, answers = { { 'SQLite' }, { 'Unit', 'Lint' } } }, next_received(before), 'received')
end)

test('c types an answer when the question allows it', function()
  local before = #received()
  local request = ask(checks)
  wait_for(float_win, 'the float')
  typed.next = 'nightly build'
  keys('2c')
  assert(float_text():find('[✎] nightly build', 1, true), float_text())
  keys('<CR>')
  eq({ kind = 'reply', id = request.id, answers = { { 'Lint', 'nightly build' } } }, next_received(before), 'received')
end)

test('typed text with a newline is shown on lines of its own (a buffer line cannot hold one)', function()
  local before = #received()
  local request = ask(checks)
  wait_for(float_win, 'the float')
  -- A picker plugin's vim.ui.input may return several lines.
  typed.next = 'first\nsecond'
  keys('c')
  assert(float_text():find('c. [✎] first\nsecond\n', 1, true), float_text())
  keys('<Esc>')
  eq({ kind = 'reject', id = request.id }, next_received(before), 'received')
end)

test('<Esc> rejects', function()
  local before = #received()
  local request = ask(checks)
  wait_for(float_win, 'the float')
  keys('<Esc>')
  eq({ kind = 'reject', id = request.id }, next_received(before), 'received')
end)

test('answered elsewhere: the float closes and the person is told', function()
  local before = #received()
  local request = ask(checks)
  wait_for(float_win, 'the float')
  http('POST', '/_sim/answer/' .. request.id, { answers = { { 'Lint' } } })
  wait_for(function()
    return float_win() == nil
  end, 'the float to close')
  eq('ask-lsp: "Checks" was answered elsewhere', notified[#notified].message, 'notification')
  vim.wait(200)
  eq(before, #received(), 'nothing sent')
end)

test('a session aborted while its question is open', function()
  local before = #received()
  local request = ask(checks, 'ses_nvim_abort')
  wait_for(float_win, 'the float')
  http('POST', '/_sim/abort/' .. request.sessionID)
  wait_for(function()
    return float_win() == nil
  end, 'the float to close')
  eq('ask-lsp: "Checks": the agent no longer waits for an answer', notified[#notified].message, 'notification')
  eq(before, #received(), 'nothing sent')
end)

test('long multi-line questions wrap inside the window', function()
  local long = ('word '):rep(60) .. 'END'
  local request = ask({
    { question = 'First line\nSecond line\n' .. long, header = 'Long', multiple = true,
      options = { { label = 'A', description = ('detail '):rep(30) } } },
  })
  wait_for(float_win, 'the float')
  local win, buf = float_win()
  local width = vim.api.nvim_win_get_width(win)
  local text = float_text()
  assert(text:find('First line', 1, true) and text:find('Second line', 1, true) and text:find('END', 1, true), text)
  for _, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    assert(vim.fn.strdisplaywidth(line) <= width, ('line wider than the window (%d): %s'):format(width, line))
  end
  keys('<Esc>')
  wait_for(function()
    -- One read of the log: two could see it before and after the reply.
    local log = received()
    return #log > 0 and log[#log].id == request.id
  end, 'the rejection')
end)

test('q leaves it pending: statusline, :AskLsp list, :AskLsp answer brings it back', function()
  local before = #received()
  local request = ask(checks)
  wait_for(float_win, 'the float')
  keys('q')
  wait_for(function()
    return require('ask-lsp').statusline() == '? 1 question'
  end, 'the statusline count')
  vim.cmd('AskLsp list')
  assert(notified[#notified].message:find('1. Checks  [sim, session ' .. request.sessionID .. ']', 1, true), notified[#notified].message)
  vim.cmd('AskLsp answer')
  wait_for(float_win, 'the float again')
  keys('3<CR>')
  eq({ kind = 'reply', id = request.id, answers = { { 'E2E' } } }, next_received(before), 'received')
  wait_for(function()
    return require('ask-lsp').statusline() == ''
  end, 'an empty statusline')
end)

test(':AskLsp reject rejects a pending question', function()
  local before = #received()
  local request = ask(checks)
  wait_for(float_win, 'the float')
  keys('q')
  vim.cmd('AskLsp reject')
  eq({ kind = 'reject', id = request.id }, next_received(before), 'received')
end)

test(':Ask still works, and says once that it is deprecated', function()
  local before = #notified
  vim.cmd('Ask status')
  vim.cmd('Ask status')
  local messages = vim.tbl_map(function(n)
    return n.message
  end, vim.list_slice(notified, before + 1))
  eq(':Ask is deprecated: use :AskLsp', messages[1], 'first message')
  eq(3, #messages, 'one warning, two statuses')
  assert(messages[2]:find('^ask%-lsp\npending: 0') and messages[3]:find('^ask%-lsp\npending: 0'), vim.inspect(messages))
end)

test('User AskLspPrompt fires with the prompt key, title, server and pending count', function()
  local fired = {}
  local id = vim.api.nvim_create_autocmd('User', {
    pattern = 'AskLspPrompt',
    callback = function(ev)
      table.insert(fired, ev.data)
    end,
  })
  local before = #received()
  local request = ask(vim.list_extend(vim.deepcopy(database), checks))
  wait_for(float_win, 'the float')
  keys('<Esc>')
  eq({ kind = 'reject', id = request.id }, next_received(before), 'received')
  vim.api.nvim_del_autocmd(id)
  eq(1, #fired, 'fired once')
  eq('sim/' .. request.id, fired[1].key, 'key')
  eq('Database (+1 more)', fired[1].title, 'title')
  eq('sim', fired[1].server, 'server')
  eq(1, fired[1].pending, 'pending')
end)

--- The form's highlight groups on the line holding `text`: { group = text }.
local function highlights_on(text)
  local _, buf = float_win()
  local ns = vim.api.nvim_get_namespaces()['ask-lsp']
  for row, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if line:find(text, 1, true) then
      local found = {}
      for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, { row - 1, 0 }, { row - 1, -1 }, { details = true })) do
        found[mark[4].hl_group] = line:sub(mark[3] + 1, mark[4].end_col)
      end
      return found
    end
  end
  error('no line with ' .. text .. ' in\n' .. float_text(), 2)
end

test('the form uses AskLsp* highlight groups, linked with default = true', function()
  eq('Title', vim.api.nvim_get_hl(0, { name = 'AskLspTitle' }).link, 'AskLspTitle link')
  eq('Comment', vim.api.nvim_get_hl(0, { name = 'AskLspDescription' }).link, 'AskLspDescription link')
  -- A person's own definition wins over the default link, even when the
  -- plugin sets its links again (as after :colorscheme).
  vim.api.nvim_set_hl(0, 'AskLspSelected', { fg = '#ff0000' })
  vim.api.nvim_exec_autocmds('ColorScheme', {})
  eq(0xff0000, vim.api.nvim_get_hl(0, { name = 'AskLspSelected' }).fg, 'the person\'s AskLspSelected')
  local before = #received()
  local request = ask(vim.list_extend(vim.deepcopy(database), checks))
  wait_for(float_win, 'the float')
  eq({ AskLspTitle = 'Question 1/2 · Database' }, highlights_on('Question 1/2'), 'title line')
  eq({ AskLspOption = '1. ( ) Postgres', AskLspDescription = ' — Relational' }, highlights_on('Postgres'), 'option line')
  keys('<Tab>1')
  eq({ AskLspSelected = '1. [x] Unit' }, highlights_on('Unit'), 'picked option')
  eq({ AskLspOption = '2. [ ] Lint' }, highlights_on('Lint'), 'other option')
  local help = highlights_on('j/k move')
  assert(help.AskLspHelp and help.AskLspHelp:find('^j/k move'), vim.inspect(help))
  keys('<Esc>')
  eq({ kind = 'reject', id = request.id }, next_received(before), 'received')
end)

--- The float's lines, and the lines with their two-space indent removed
--- joined with nothing: long text cut into lines reads whole again.
local function float_lines()
  local _, buf = float_win()
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  return lines, table.concat(vim.tbl_map(function(line)
    return (line:gsub('^  ', ''))
  end, lines))
end

local function assert_fits()
  local win = float_win()
  local width = vim.api.nvim_win_get_width(win)
  for _, line in ipairs(float_lines()) do
    assert(vim.fn.strdisplaywidth(line) <= width, ('line wider than the window (%d): %s'):format(width, line))
  end
end

local function float_closed()
  wait_for(function()
    return float_win() == nil
  end, 'the float to close')
end

local DIR = '/sim/project'
local function bash(command, session)
  return http('POST', '/_sim/permission', {
    sessionID = session,
    permission = 'bash',
    patterns = { command },
    metadata = { command = command },
    always = { command:match('^%S+') .. ' *' },
  })
end

test('a long CJK question and option are laid out by display cells: no line wider than the window, no character cut', function()
  local question = ('这是一个没有空格的很长的中文问题，'):rep(8) .. '结束。'
  local option = ('选项说明'):rep(30)
  local request = ask({ { question = question, header = '长问题', multiple = true,
    options = { { label = '甲', description = option } } } })
  wait_for(float_win, 'the float')
  local lines = float_lines()
  assert_fits()
  for _, line in ipairs(lines) do
    assert(whole_utf8(line), 'a character cut in two: ' .. line)
  end
  -- Wrapped, not shortened: the agent's text reads whole across its lines.
  local joined = table.concat(lines)
  assert(joined:find(question, 1, true) and joined:find(option, 1, true), float_text())
  -- The plugin's words stay English by default.
  eq('Question · 长问题 (pick any)', lines[1], 'title line')
  local before = #received()
  keys('<Esc>')
  eq({ kind = 'reject', id = request.id }, next_received(before), 'received')
end)

test('a permission shows the whole command and who asks; o allows once', function()
  local before = #received()
  -- Long, on two lines, with the dangerous part at the very end.
  local command = 'echo start && printf ' .. ('%s'):rep(120) .. '\nrm -rf /tmp/ask-lsp-nvim-spec-END'
  local request = bash(command, 'ses_nvim_once')
  wait_for(float_win, 'the float')
  local lines, joined = float_lines()
  eq('Permission · bash', lines[1], 'first line')
  assert(joined:find(command:gsub('\n', ''), 1, true), 'the whole command:\n' .. float_text())
  assert(float_text():find('Session ses_nvim_once · server sim · ' .. DIR, 1, true), float_text())
  assert(float_text():find('[1/o] Allow once', 1, true), float_text())
  assert(float_text():find('[2/a] Allow always (echo *)', 1, true), float_text())
  assert(float_text():find('[3/r] Reject', 1, true), float_text())
  assert_fits()
  vim.wait(100)
  eq(before, #received(), 'nothing sent before a key')
  keys('o')
  eq({ kind = 'permission', id = request.id, reply = 'once', message = vim.NIL }, next_received(before), 'received')
  float_closed()
end)

test('a permission: a allows always', function()
  local before = #received()
  local request = bash('git status --short', 'ses_nvim_always')
  wait_for(float_win, 'the float')
  keys('a')
  eq({ kind = 'permission', id = request.id, reply = 'always', message = vim.NIL }, next_received(before), 'received')
  float_closed()
end)

test('a permission: m rejects with the reason typed', function()
  local before = #received()
  local request = bash('rm -rf build/', 'ses_nvim_reason')
  wait_for(float_win, 'the float')
  typed.next = '  use the trash instead  '
  keys('m')
  eq({ kind = 'permission', id = request.id, reply = 'reject', message = 'use the trash instead' }, next_received(before), 'received')
  float_closed()
end)

test('a permission: an empty reason sends nothing; r rejects; q leaves it pending', function()
  local before = #received()
  local request = bash('make clean', 'ses_nvim_reject')
  wait_for(float_win, 'the float')
  typed.next = ''
  keys('m')
  vim.wait(100)
  eq(before, #received(), 'nothing sent for an empty reason')
  keys('q')
  float_closed()
  vim.wait(100)
  eq(before, #received(), 'nothing sent by q')
  vim.cmd('AskLsp answer')
  wait_for(float_win, 'the float again')
  keys('r')
  eq({ kind = 'permission', id = request.id, reply = 'reject', message = vim.NIL }, next_received(before), 'received')
end)

test('an edit shows its files and diff; answered in another client, the float closes', function()
  local before = #received()
  local diff = '--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1 +1 @@\n-fn old() {}\n+fn new() {}\n'
  local request = http('POST', '/_sim/permission', {
    sessionID = 'ses_nvim_edit',
    permission = 'edit',
    patterns = { 'src/main.rs' },
    metadata = { filepath = DIR .. '/src/main.rs', diff = diff },
    always = { '*' },
  })
  wait_for(float_win, 'the float')
  local text = float_text()
  assert(text:find('Edit ' .. DIR .. '/src/main.rs', 1, true), text)
  assert(text:find('Files:\n  src/main.rs\n  ' .. DIR .. '/src/main.rs\n', 1, true), text)
  assert(text:find('Diff:\n  --- a/src/main.rs\n', 1, true), text)
  eq({ AskLspAdded = '  +fn new() {}' }, highlights_on('+fn new'), 'added line')
  eq({ AskLspRemoved = '  -fn old() {}' }, highlights_on('-fn old'), 'removed line')
  -- Another client allows it.
  local out = vim.system({ 'curl', '-s', '-m', '5', '-X', 'POST', SIM .. '/permission/' .. request.id .. '/reply?directory=' .. DIR,
    '-H', 'content-type: application/json', '-d', '{"reply":"once"}' }, { text = true }):wait()
  eq('true', out.stdout, 'the other client\'s reply')
  float_closed()
  assert(notified[#notified].message:find('elsewhere', 1, true), notified[#notified].message)
  vim.wait(200)
  eq({ kind = 'permission', id = request.id, reply = 'once', message = vim.NIL }, received()[before + 1], 'the other client\'s reply')
  eq(before + 1, #received(), 'nothing sent from Neovim')
end)

--- The proposed side of an edit's diff split: its window, buffer, and the
--- file's window beside it.
local function diff_split()
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local buf = vim.api.nvim_win_get_buf(win)
    if vim.api.nvim_buf_get_name(buf):find('^ask%-lsp://proposed/') then
      for _, other in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
        if other ~= win then
          return win, buf, other
        end
      end
    end
  end
end

--- An edit of a real file: `before` on disk, the diff the agent proposes.
--- The project is the editor's working directory: the split opens only
--- files of the project (the runner goes back to the repository after each
--- test).
local function edit_file(name, session, on_disk)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  vim.fn.chdir(dir)
  dir = vim.uv.fs_realpath(dir)
  local path = dir .. '/' .. name
  vim.fn.writefile(on_disk or { 'fn a() {}', 'fn old() {}', 'fn c() {}', 'fn d() {}' }, path)
  local diff = ('--- a/%s\n+++ b/%s\n@@ -1,3 +1,4 @@\n fn a() {}\n-fn old() {}\n+fn new() {}\n+fn added() {}\n fn c() {}\n'):format(name, name)
  local request = http('POST', '/_sim/permission', {
    sessionID = session, permission = 'edit', patterns = { name }, metadata = { filepath = path, diff = diff }, always = { '*' },
  })
  return path, request
end

test('an edit of a real file opens it beside the proposed version in a diff split; o allows once', function()
  local before = #received()
  local tabs = #vim.api.nvim_list_tabpages()
  local path, request = edit_file('split.rs', 'ses_nvim_split')
  wait_for(diff_split, 'the diff split')
  local win, buf, file_win = diff_split()
  eq(win, vim.api.nvim_get_current_win(), 'the cursor on the proposed side')
  eq('ask-lsp://now/' .. path, vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(file_win)), 'the file as it is now beside it')
  eq({ 'fn a() {}', 'fn new() {}', 'fn added() {}', 'fn c() {}', 'fn d() {}' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'proposed')
  eq({ 'fn a() {}', 'fn old() {}', 'fn c() {}', 'fn d() {}' }, vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(file_win), 0, -1, false), 'the file')
  eq({ true, true }, { vim.wo[win].diff, vim.wo[file_win].diff }, 'diff mode on both sides')
  eq({ 'rust', 'rust' }, { vim.bo[buf].filetype, vim.bo[vim.api.nvim_win_get_buf(file_win)].filetype }, 'the file type on both sides')
  local bar = vim.wo[win].winbar
  assert(bar:find('[1/o] Allow once', 1, true) and bar:find('[3/r] Reject', 1, true) and bar:find('Session ses_nvim_split', 1, true), bar)
  vim.wait(100)
  eq(before, #received(), 'nothing sent before a key')
  keys('o')
  eq({ kind = 'permission', id = request.id, reply = 'once', message = vim.NIL }, next_received(before), 'received')
  wait_for(function()
    return diff_split() == nil and #vim.api.nvim_list_tabpages() == tabs
  end, 'the split to close')
  eq(-1, vim.fn.bufnr(path), 'the file, opened only for the diff, is not left loaded')
  eq({ 'fn a() {}', 'fn old() {}', 'fn c() {}', 'fn d() {}' }, vim.fn.readfile(path), 'the file on disk untouched')
  vim.wait(200)
  eq(before + 1, #received(), 'sent once')
end)

test('the diff split: r rejects; a diff that no longer applies falls back to the float', function()
  local before = #received()
  local path, request = edit_file('reject.rs', 'ses_nvim_split_reject')
  wait_for(diff_split, 'the diff split')
  keys('r')
  eq({ kind = 'permission', id = request.id, reply = 'reject', message = vim.NIL }, next_received(before), 'received')
  wait_for(function()
    return diff_split() == nil
  end, 'the split to close')
  vim.wait(200)
  eq(before + 1, #received(), 'sent once')
  -- The file changed since the agent read it: its diff does not apply.
  local changed, stale = edit_file('stale.rs', 'ses_nvim_split_stale', { 'fn a() {}', 'fn other() {}', 'fn c() {}' })
  wait_for(float_win, 'the float')
  assert(float_text():find('Diff:\n  --- a/stale.rs', 1, true), float_text())
  eq(nil, diff_split(), 'no split')
  keys('r')
  eq({ kind = 'permission', id = stale.id, reply = 'reject', message = vim.NIL }, next_received(before + 1), 'received')
  float_closed()
  vim.fn.delete(vim.fs.dirname(path), 'rf')
  vim.fn.delete(vim.fs.dirname(changed), 'rf')
end)

--- An edit permission whose diff applies to any file (a hunk with no
--- context line) naming `filepath` (or, without it, only the diff's `+++`
--- path, joined to the request's directory).
local function hostile_edit(session, filepath, named)
  local diff = ('--- a/%s\n+++ b/%s\n@@ -0,0 +1 @@\n+pwned\n'):format(named or 'x', named or 'x')
  return http('POST', '/_sim/permission', {
    sessionID = session, permission = 'edit', patterns = { named or 'x' },
    metadata = { filepath = filepath, diff = diff }, always = { '*' },
  })
end

--- A project (the editor's working directory) and, outside it, a secret.
local function project_and_secret()
  local base = vim.uv.fs_realpath(vim.fn.tempname():match('^(.*)/') ) .. '/hostile-' .. vim.uv.hrtime()
  vim.fn.mkdir(base .. '/project', 'p')
  vim.fn.mkdir(base .. '/home/.ssh', 'p')
  local secret = base .. '/home/.ssh/id_ed25519'
  vim.fn.writefile({ 'SECRET-KEY-MATERIAL-0123' }, secret)
  vim.fn.chdir(base .. '/project')
  return base .. '/project', secret, base
end

--- No buffer is the secret's or holds its content; the split did not open.
local function nothing_read(secret)
  eq(nil, diff_split(), 'no split')
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(buf)
    assert(not (secret and name:find(secret, 1, true)), 'a buffer for ' .. name)
    if vim.api.nvim_buf_is_loaded(buf) then
      local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
      assert(not text:find('SECRET-KEY-MATERIAL', 1, true), 'the secret is in buffer ' .. buf .. ' ' .. name)
    end
  end
end

--- The prompt is on screen with the diff alone and `note`; r rejects it
--- (Neovim is alive and takes keys).
local function float_says_then_reject(request, note, before)
  wait_for(float_win, 'the float')
  local text = float_text()
  assert(text:find('Diff:\n  --- a/', 1, true), text)
  -- The note may wrap, a long path even inside a word: compared without
  -- white space.
  local flat = text:gsub('%s+', '')
  assert(flat:find((note:gsub('%s+', '')), 1, true), ('%q not in\n%s'):format(note, text))
  keys('r')
  eq({ kind = 'permission', id = request.id, reply = 'reject', message = vim.NIL }, next_received(before), 'received')
  float_closed()
end

test('the diff split opens no file outside the project: a secret by its path, by +++ b/../, by a symlink in the project', function()
  local project, secret, base = project_and_secret()
  vim.uv.fs_symlink(secret, project .. '/innocent.rs')
  local before = #received()
  local request = hostile_edit('ses_nvim_secret_abs', secret)
  float_says_then_reject(request, secret .. ' is outside the project', before)
  nothing_read(secret)
  -- Only the diff's path, climbing out of the request's directory.
  request = hostile_edit('ses_nvim_secret_rel', nil, '../..' .. secret)
  float_says_then_reject(request, 'is outside the project', before + 1)
  nothing_read(secret)
  request = hostile_edit('ses_nvim_secret_link', project .. '/innocent.rs')
  float_says_then_reject(request, project .. '/innocent.rs → ' .. secret .. ' is outside the project', before + 2)
  nothing_read(secret)
  vim.fn.delete(base, 'rf')
end)

test('the diff split: a new file in new folders of the project opens beside an empty side; a link inside the project to a project file opens too', function()
  local project, _, base = project_and_secret()
  local before = #received()
  local request = hostile_edit('ses_nvim_new_file', project .. '/new/dir/x.rs')
  wait_for(diff_split, 'the diff split')
  local _, buf, file_win = diff_split()
  eq({ 'pwned' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'proposed')
  eq({ '' }, vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(file_win), 0, -1, false), 'nothing yet')
  keys('r')
  eq({ kind = 'permission', id = request.id, reply = 'reject', message = vim.NIL }, next_received(before), 'received')
  wait_for(function()
    return diff_split() == nil
  end, 'the split to close')
  vim.fn.writefile({ 'fn kept() {}' }, project .. '/real.rs')
  vim.uv.fs_symlink(project .. '/real.rs', project .. '/alias.rs')
  request = hostile_edit('ses_nvim_alias', project .. '/alias.rs')
  wait_for(diff_split, 'the diff split')
  _, buf = diff_split()
  eq({ 'pwned', 'fn kept() {}' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'proposed')
  keys('r')
  eq({ kind = 'permission', id = request.id, reply = 'reject', message = vim.NIL }, next_received(before + 1), 'received')
  wait_for(function()
    return diff_split() == nil
  end, 'the split to close')
  eq({ 'fn kept() {}' }, vim.fn.readfile(project .. '/real.rs'), 'untouched')
  vim.fn.delete(base, 'rf')
end)

test('the diff split reads no device or FIFO: /dev/zero, /dev/tty, a FIFO in the project; Neovim stays responsive', function()
  local project, _, base = project_and_secret()
  local fifo = project .. '/pipe.rs'
  assert(vim.fn.system({ 'mkfifo', fifo }) and vim.v.shell_error == 0, 'mkfifo')
  vim.uv.fs_symlink('/dev/zero', project .. '/zero.rs')
  local before = #received()
  local cases = {
    { '/dev/zero', '/dev/zero is outside the project' },
    { project .. '/zero.rs', project .. '/zero.rs → /dev/zero is outside the project' },
    { '/dev/tty', '/dev/tty is outside the project' },
    { fifo, fifo .. ' is not a regular file' },
  }
  for i, case in ipairs(cases) do
    local started = vim.uv.hrtime()
    local request = hostile_edit('ses_nvim_device_' .. i, case[1])
    float_says_then_reject(request, case[2], before + i - 1)
    nothing_read(nil)
    -- Responsive: a key round trip through the event loop.
    eq(2, vim.fn.eval('1 + 1'), 'Neovim evaluates')
    assert((vim.uv.hrtime() - started) / 1e9 < 60, 'took too long: ' .. case[1])
  end
  vim.fn.delete(base, 'rf')
end)

--- The agent's request through the sandbox-agent endpoint; its JSON-RPC id.
local acp_requests = 0
local function acp_request(method, params)
  acp_requests = acp_requests + 1
  local id = 'nvim-' .. acp_requests
  http('POST', '/_sim/acp/nvim', { jsonrpc = '2.0', id = id, method = method, params = params })
  return id
end

--- What the agent received for request `id`, as the log records it.
local function acp_response(id, result)
  return { kind = 'acp', message = { jsonrpc = '2.0', id = id, result = result } }
end

local ORDER_FORM = {
  type = 'object',
  required = { 'color', 'email', 'port' },
  properties = {
    checks = { type = 'array', title = 'Checks', minItems = 1, maxItems = 2,
      items = { anyOf = { { const = 'unit', title = 'Unit' }, { const = 'lint', title = 'Lint' }, { const = 'e2e', title = 'E2E' } } } },
    color = { type = 'string', title = 'Color', oneOf = { { const = 'red', title = 'Red' }, { const = 'green', title = 'Green' } } },
    email = { type = 'string', title = 'Email', format = 'email', description = 'Where the report goes' },
    note = { type = 'string', title = 'Note', maxLength = 20 },
    port = { type = 'integer', title = 'Port', minimum = 1024, maximum = 65535 },
    verbose = { type = 'boolean', title = 'Verbose' },
  },
}

test('a form: every field type, hints and required marks; refused until valid, then the agent gets the values', function()
  local before = #received()
  local id = acp_request('elicitation/create', { sessionId = 'nvim-acp', mode = 'form', message = 'Configure the run\nBefore it starts', requestedSchema = ORDER_FORM })
  wait_for(float_win, 'the float')
  local text = float_text()
  for _, expected in ipairs({ 'Form\nConfigure the run\nBefore it starts\nSession nvim-acp · server acp',
    '1. Checks — pick any · 1–2 choices', '   [ ] Unit', '2. Color * — pick one', '   ( ) Red',
    '3. Email * — email', '   Where the report goes', '   > (empty)', '4. Note — text · at most 20 characters',
    '5. Port * — whole number · 1024–65535', '6. Verbose — yes/no\n   [ ] (not set)' }) do
    assert(text:find(expected, 1, true), ('%q not in\n%s'):format(expected, text))
  end
  assert_fits()
  -- Nothing filled: refused, with the reasons.
  keys('s')
  assert(notified[#notified].message:find('Color is required\nEmail is required\nPort is required', 1, true), notified[#notified].message)
  assert(float_text():find('⚠ Color is required', 1, true), float_text())
  -- Checks: Unit and E2E; Color: Green.
  keys('gg<Space>jj<Space>')
  assert(float_text():find('[x] Unit\n   [ ] Lint\n   [x] E2E', 1, true), float_text())
  keys('jj<Space>')
  assert(float_text():find('( ) Red\n   (•) Green', 1, true), float_text())
  keys('<Tab>')
  typed.next = 'not an address'
  keys('<CR>')
  assert(notified[#notified].message:find('Email is not a valid email', 1, true), notified[#notified].message)
  typed.next = 'dev@example.com'
  keys('<CR>')
  assert(float_text():find('> dev@example.com', 1, true), float_text())
  keys('<Tab><Tab>')
  typed.next = '80'
  keys('<CR>')
  eq('ask-lsp: Port takes at least 1024', notified[#notified].message, 'checked as typed')
  assert(float_text():find('> 80\n   ⚠ Port takes at least 1024', 1, true), float_text())
  keys('j<Space>')
  assert(float_text():find('[x] yes', 1, true), float_text())
  keys('s')
  eq('ask-lsp: not sent:\nPort takes at least 1024', notified[#notified].message, 'refused')
  vim.wait(100)
  eq(before, #received(), 'nothing sent while a value is wrong')
  typed.next = '8080'
  keys('<CR>s')
  -- Valid: a review of every value first; nothing is sent yet.
  local review = float_text()
  for _, expected in ipairs({ 'Review: nothing is sent until you press s\nConfigure the run',
    '1. Checks\n   Unit, E2E', '2. Color\n   Green', '3. Email\n   dev@example.com', '4. Note\n   (empty)',
    '5. Port\n   8080', '6. Verbose\n   yes', '[s] Send' }) do
    assert(review:find(expected, 1, true), ('%q not in\n%s'):format(expected, review))
  end
  assert_fits()
  vim.wait(100)
  eq(before, #received(), 'nothing sent before the review is confirmed')
  -- b: back to the form, s: the review again; 3 changes the email.
  keys('b')
  assert(float_text():find('^Form\n'), float_text())
  keys('s')
  typed.next = 'ops@example.com'
  keys('3')
  assert(float_text():find('^Form\n.*> ops@example.com'), float_text())
  keys('s')
  assert(float_text():find('3. Email\n   ops@example.com', 1, true), float_text())
  vim.wait(100)
  eq(before, #received(), 'nothing sent while reviewing')
  keys('s')
  eq(acp_response(id, { action = 'accept', content = {
    checks = { 'unit', 'e2e' }, color = 'green', email = 'ops@example.com', port = 8080, verbose = true } }),
    next_received(before), 'received: the value changed in the review')
  float_closed()
end)

test('a form of one field is sent without a review', function()
  local before = #received()
  local id = acp_request('elicitation/create', { sessionId = 'nvim-acp', mode = 'form', message = 'Name it',
    requestedSchema = { type = 'object', required = { 'name' }, properties = { name = { type = 'string', title = 'Name' } } } })
  wait_for(float_win, 'the float')
  typed.next = 'demo'
  keys('<CR>s')
  eq(acp_response(id, { action = 'accept', content = { name = 'demo' } }), next_received(before), 'received')
  float_closed()
end)

test('a form: text on several lines is shown split; d declines', function()
  local before = #received()
  local id = acp_request('elicitation/create', { sessionId = 'nvim-acp', mode = 'form', message = 'Pick', requestedSchema = ORDER_FORM })
  wait_for(float_win, 'the float')
  keys('gg')
  keys('<Tab><Tab><Tab>')
  typed.next = 'one\ntwo'
  keys('<CR>')
  assert(float_text():find('4. Note — text · at most 20 characters\n   > one\n   two\n', 1, true), float_text())
  keys('d')
  eq(acp_response(id, { action = 'decline' }), next_received(before), 'received')
  float_closed()
end)

test('a form the agent withdraws closes; nothing is sent', function()
  local before = #received()
  local id = acp_request('elicitation/create', { sessionId = 'nvim-acp', mode = 'form', message = 'Pick', requestedSchema = ORDER_FORM })
  wait_for(float_win, 'the float')
  http('POST', '/_sim/acp/nvim', { jsonrpc = '2.0', method = '$/cancel_request', params = { requestId = id } })
  float_closed()
  vim.wait(200)
  eq(before, #received(), 'nothing sent')
end)

test('a link shows its domain and the whole URL, and opens only when the person presses o', function()
  local opened = {}
  local open = vim.ui.open
  vim.ui.open = function(url)
    table.insert(opened, url)
    return {}, nil
  end
  local before = #received()
  local url = 'https://auth.example.com/device?code=' .. ('X'):rep(150) .. '&state=END'
  local id = acp_request('elicitation/create', { sessionId = 'nvim-acp', mode = 'url', message = 'Sign in to continue',
    elicitationId = 'el-nvim-1', url = url })
  wait_for(float_win, 'the float')
  local lines, joined = float_lines()
  eq('Link', lines[1], 'first line')
  assert(float_text():find('Sign in to continue', 1, true), float_text())
  assert(float_text():find('Domain: auth.example.com', 1, true), float_text())
  assert(joined:find(url, 1, true), 'the whole URL:\n' .. float_text())
  assert_fits()
  vim.wait(200)
  eq({}, opened, 'not opened by itself')
  eq(before, #received(), 'nothing sent')
  keys('o')
  vim.ui.open = open
  eq({ url }, opened, 'opened once, on o')
  eq(acp_response(id, { action = 'accept' }), next_received(before), 'received')
  float_closed()
end)

test('setup on a Neovim older than 0.11 says so and starts nothing', function()
  local has = vim.fn.has
  -- Only 0.11.4 is on PyPI: an older Neovim is stood in for by its has().
  vim.fn.has = function(feature)
    return feature == 'nvim-0.11' and 0 or has(feature)
  end
  local ok, started = pcall(require('ask-lsp').setup, { cmd = { '/nonexistent/ask-lsp' } })
  vim.fn.has = has
  assert(ok, started)
  local v = vim.version()
  eq({ message = ('ask-lsp needs Neovim 0.11 or newer; this is %d.%d.%d'):format(v.major, v.minor, v.patch), level = vim.log.levels.ERROR },
    notified[#notified], 'notification')
  eq({ BIN }, require('ask-lsp.config').options.cmd, 'configuration untouched')
end)

test('catalogues: zh-CN has every key en has and no other, with the same placeholders; every key the plugin uses exists', function()
  local i18n = require('ask-lsp.i18n')
  local en, zh = i18n.catalogues.en, i18n.catalogues['zh-CN']
  for key, text in pairs(en) do
    assert(zh[key], 'zh-CN lacks ' .. key)
    eq(i18n.placeholders(text), i18n.placeholders(zh[key]), 'placeholders of ' .. key)
  end
  for key in pairs(zh) do
    assert(en[key], 'en lacks ' .. key .. ' (zh-CN has it)')
  end
  -- The plugin's sources: every t('key') names a key of en; every key of en
  -- is named somewhere (directly or in a table of keys).
  local sources = {}
  for _, dir in ipairs({ root .. '/editors/nvim', root .. '/plugin' }) do
    for _, file in ipairs(vim.fn.globpath(dir, '**/*.lua', false, true)) do
      if not file:find('/i18n/', 1, true) then
        table.insert(sources, table.concat(vim.fn.readfile(file), '\n'))
      end
    end
  end
  table.insert(sources, table.concat(vim.fn.readfile(root .. '/build.lua'), '\n'))
  local all = table.concat(sources, '\n')
  local used = 0
  for key in all:gmatch("%f[%w_.]t%('([^']+)'") do
    used = used + 1
    assert(en[key], ('t(%q) has no message in en.lua'):format(key))
  end
  assert(used > 100, 'the lookups were found: ' .. used)
  for key in pairs(en) do
    assert(all:find("'" .. key .. "'", 1, true), key .. ' is in en.lua but no source uses it')
  end
  -- A missing key falls back to English.
  local send = zh['form.send']
  zh['form.send'], i18n.setting = nil, 'zh-CN'
  local ok, fallback = pcall(i18n.t, 'form.send')
  zh['form.send'], i18n.setting = send, nil
  assert(ok, fallback)
  eq('Send', fallback, 'fallback')
end)

test('the locale: setup{ locale } > v:lang > $LC_ALL > $LC_MESSAGES > $LANG > en; tags normalised; nothing sent when unset', function()
  local resolve = require('ask-lsp.i18n').resolve
  local cases = {
    -- setting, v:lang, environment, expected
    { nil, nil, {}, 'en' },
    { 'zh-CN', 'en_US.UTF-8', { LANG = 'en_US.UTF-8' }, 'zh-CN' },
    { 'en', 'zh_CN.UTF-8', { LANG = 'zh_CN.UTF-8' }, 'en' },
    { 'fr', 'zh_CN.UTF-8', {}, 'en' },
    { '', 'zh_CN.UTF-8', {}, 'zh-CN' },
    { nil, 'zh_CN.UTF-8', { LANG = 'en_US.UTF-8' }, 'zh-CN' },
    { nil, 'en_US.UTF-8', { LANG = 'zh_CN.UTF-8' }, 'en' },
    -- v:lang "C"/"POSIX": no language chosen; the environment decides.
    { nil, 'C', { LANG = 'zh_CN.UTF-8' }, 'zh-CN' },
    { nil, 'C.UTF-8', { LC_MESSAGES = 'zh_SG' }, 'zh-CN' },
    { nil, 'POSIX', {}, 'en' },
    { nil, '', { LC_ALL = 'zh_CN.UTF-8', LC_MESSAGES = 'en_US', LANG = 'en_US' }, 'zh-CN' },
    { nil, '', { LC_ALL = '', LC_MESSAGES = 'en_GB', LANG = 'zh_CN' }, 'en' },
    { nil, '', { LC_ALL = '', LC_MESSAGES = '', LANG = 'zh_CN.GB18030' }, 'zh-CN' },
  }
  for _, case in ipairs(cases) do
    eq(case[4], resolve(case[1], case[2], case[3]), vim.inspect(case))
  end
  local normalize = require('ask-lsp.i18n').normalize
  local tags = {
    zh = 'zh-CN', ['zh-CN'] = 'zh-CN', zh_cn = 'zh-CN', ['ZH-cn'] = 'zh-CN', ['zh_CN.UTF-8@x'] = 'zh-CN', ['zh-SG'] = 'zh-CN',
    ['zh-Hans'] = 'zh-CN', ['zh-Hans-CN'] = 'zh-CN', ['zh_Hans_SG'] = 'zh-CN',
    ['zh-TW'] = 'en', ['zh_HK.UTF-8'] = 'en', ['zh-Hant'] = 'en', ['zh-Hant-TW'] = 'en',
    en = 'en', ['en_US.UTF-8'] = 'en', C = 'en', POSIX = 'en', [''] = 'en', fr = 'en', ['zh-cnx'] = 'en', ['!!'] = 'en',
  }
  for tag, expected in pairs(tags) do
    eq(expected, normalize(tag), tag)
  end
  -- setup{} without a locale: nothing extra in initializationOptions.
  local client = require('ask-lsp.client').get()
  eq(nil, client.config.init_options.locale, 'initializationOptions.locale')
  eq('en', require('ask-lsp.i18n').locale(), 'the suite runs in English')
end)

test('the committed doc/tags are what :helptags makes', function()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  local doc = root .. '/editors/nvim/doc/'
  vim.uv.fs_copyfile(doc .. 'ask-lsp.txt', dir .. '/ask-lsp.txt')
  vim.cmd.helptags(vim.fn.fnameescape(dir))
  eq(vim.fn.readfile(dir .. '/tags'), vim.fn.readfile(doc .. 'tags'), 'doc/tags (regenerate: nvim --clean -c "helptags editors/nvim/doc" -c q)')
  vim.fn.delete(dir, 'rf')
end)

--- Runs a child Neovim on tests/nvim/<script>; returns the JSON on its last line.
local function child(script, args, env, timeout_ms)
  local cmd = vim.list_extend({ vim.v.progpath, '--headless', '--clean', '-l', root .. '/tests/nvim/' .. script }, args)
  local out = vim.system(cmd, { env = env, text = true }):wait(timeout_ms)
  assert(out.code == 0, ('%s exited %d\n%s\n%s'):format(script, out.code, out.stdout, out.stderr))
  local lines = vim.split(vim.trim(out.stdout), '\n')
  return vim.json.decode(lines[#lines])
end

test("no plugin: vim.lsp.enable('ask_lsp') asks through showMessageRequest; the answer reaches the server", function()
  local work = vim.fn.tempname()
  vim.fn.mkdir(work, 'p')
  local seen = child('plain.lua', { root, work }, {
    PATH = vim.fs.dirname(BIN) .. ':' .. os.getenv('PATH'),
    ASK_LSP_URL = PLAIN,
  }, 60000)
  vim.fn.delete(work, 'rf')
  eq(false, seen.plugin_loaded, 'plugin loaded')
  eq({ 'ask-lsp' }, seen.cmd, 'command')
  eq(1, seen.clients, 'one ask-lsp client')
  eq('lsp_message', seen.shown.kind, 'shown through showMessageRequest')
  assert(seen.shown.prompt:find('[Database] Which database?', 1, true), seen.shown.prompt)
  assert(vim.tbl_contains(seen.shown.titles, 'SQLite'), vim.inspect(seen.shown.titles))
  eq({ { kind = 'reply', id = seen.id, answers = { { 'SQLite' } } } }, received(PLAIN), 'received')
end)

test("no plugin: :AskLsp talks to the ask_lsp client and never starts a second one", function()
  local work = vim.fn.tempname()
  vim.fn.mkdir(work, 'p')
  local seen = child('plain_command.lua', { root, work }, {
    PATH = vim.fs.dirname(BIN) .. ':' .. os.getenv('PATH'),
    ASK_LSP_URL = PLAIN,
  }, 60000)
  vim.fn.delete(work, 'rf')
  eq({ plugin = 0, plain = 0 }, seen.before.clients, 'clients before the first file')
  eq({ plugin = 0, plain = 0 }, seen.before.later, 'clients after :AskLsp list')
  assert(seen.before.said:find("vim.lsp.enable('ask_lsp')", 1, true), seen.before.said)
  assert(seen.status:find('default ' .. PLAIN .. ': connected', 1, true), seen.status)
  eq('ask-lsp: nothing pending', seen.list, ':AskLsp list')
  eq({ plugin = 0, plain = 1 }, seen.clients, 'one ask-lsp client, the plain one')
end)

test(':checkhealth says where a server nobody configured was found (service.json)', function()
  local state = vim.fn.tempname()
  vim.fn.mkdir(state .. '/opencode', 'p')
  local file = state .. '/opencode/service.json'
  local pid = assert(tonumber(os.getenv('ASK_SIM_PLAIN_PID')), 'ASK_SIM_PLAIN_PID')
  vim.fn.writefile({ vim.json.encode({ url = PLAIN, pid = pid }) }, file)
  local seen = child('discovered.lua', { root }, { XDG_STATE_HOME = state, ASK_LSP_BIN = BIN }, 60000)
  vim.fn.delete(state, 'rf')
  local found = ('server default (%s): no server configured; found running: %s'):format(PLAIN, file)
  assert(seen.health:find(found, 1, true), seen.health)
  assert(seen.health:find('OK server default (' .. PLAIN .. '): connected', 1, true), seen.health)
end)

--- A release: a clone of the repository (Cargo.toml, the root's plugin/
--- and build.lua, editors/nvim) tagged v9.9.9 and checked out at the tag,
--- the tag's checksum list committed after it on master (as a release
--- does), a local HTTP server with that tag's archive for this platform
--- (holding `binary`, else a script saying "prebuilt") and a .sha256 beside
--- it, and a fake cargo that records how it is run. publish() puts another
--- archive on the server (with a matching .sha256 there).
local function release_fixture(binary)
  local tmp = vim.fn.tempname()
  local clone, srv = tmp .. '/clone', tmp .. '/srv/v9.9.9'
  vim.fn.mkdir(clone .. '/editors', 'p')
  vim.fn.mkdir(srv, 'p')
  vim.fn.mkdir(tmp .. '/bin', 'p')
  local function sh(cmd, cwd)
    local out = vim.system(cmd, { cwd = cwd, text = true }):wait()
    assert(out.code == 0, table.concat(cmd, ' ') .. ': ' .. (out.stderr or ''))
    return out.stdout
  end
  local git = { 'git', '-c', 'user.name=t', '-c', 'user.email=t@t' }
  sh({ 'cp', '-r', root .. '/Cargo.toml', root .. '/build.lua', root .. '/plugin', clone .. '/' })
  sh({ 'cp', '-r', root .. '/editors/nvim', clone .. '/editors/' })
  vim.fn.delete(clone .. '/editors/nvim/bin', 'rf')
  sh({ 'git', 'init', '-q', '-b', 'master' }, clone)
  sh({ 'git', 'add', '.' }, clone)
  sh(vim.list_extend(vim.deepcopy(git), { 'commit', '-qm', 'release' }), clone)
  sh({ 'git', 'tag', 'v9.9.9' }, clone)
  local target = vim.uv.os_uname().machine .. '-unknown-linux-gnu'
  local folder = 'ask-lsp-' .. target
  local name = folder .. '.tar.gz'
  --- The archive on the server: `kind` 'file' (ask-lsp is `content`, a
  --- script or a binary's path), 'link' (a symlink to `content`) or
  --- 'outside' (a good file plus an entry ../ask-lsp); returns its SHA-256.
  local function publish(kind, content)
    local file = tmp .. '/payload'
    if content and vim.uv.fs_stat(content) then
      sh({ 'cp', content, file })
    else
      vim.fn.writefile({ '#!/bin/sh', ('echo "ask-lsp 9.9.9 (%s)"'):format(content or 'prebuilt') }, file)
    end
    sh({ 'python3', '-c', [[
import io, sys, tarfile
out, folder, kind, payload = sys.argv[1:5]
data = open(payload, 'rb').read()
def add(tar, name):
    entry = tarfile.TarInfo(name); entry.size = len(data); entry.mode = 0o755
    tar.addfile(entry, io.BytesIO(data))
with tarfile.open(out, 'w:gz') as tar:
    top = tarfile.TarInfo(folder); top.type = tarfile.DIRTYPE; top.mode = 0o755
    tar.addfile(top)
    if kind == 'link':
        link = tarfile.TarInfo(folder + '/ask-lsp'); link.type = tarfile.SYMTYPE; link.linkname = payload
        tar.addfile(link)
    else:
        add(tar, folder + '/ask-lsp')
    if kind == 'outside':
        add(tar, '../ask-lsp')
]], srv .. '/' .. name, folder, kind, file })
    local sum = vim.trim(sh({ 'sha256sum', name }, srv))
    vim.fn.writefile({ sum }, srv .. '/' .. name .. '.sha256')
    return sum
  end
  local good = publish('file', binary)
  -- The release's checksums, committed on master after the tag was built.
  vim.fn.mkdir(clone .. '/editors/nvim/checksums', 'p')
  vim.fn.writefile({ good }, clone .. '/editors/nvim/checksums/v9.9.9.sha256')
  sh({ 'git', 'add', '.' }, clone)
  sh(vim.list_extend(vim.deepcopy(git), { 'commit', '-qm', 'checksums of v9.9.9' }), clone)
  sh({ 'git', 'checkout', '-q', 'v9.9.9' }, clone)
  -- cargo: `metadata` names the target directory, `build` makes a binary
  -- that says it was built, and each call's arguments are recorded.
  vim.fn.writefile({ '#!/bin/sh', ('echo "$*" >> %s/cargo.log'):format(tmp),
    ('if [ "$1" = metadata ]; then echo \'{"target_directory":"%s/target"}\'; exit 0; fi'):format(tmp),
    ('mkdir -p %s/target/release && printf \'#!/bin/sh\\necho "ask-lsp 9.9.9 (built)"\\n\' > %s/target/release/ask-lsp'):format(tmp, tmp),
    ('chmod +x %s/target/release/ask-lsp'):format(tmp) }, tmp .. '/bin/cargo')
  vim.uv.fs_chmod(tmp .. '/bin/cargo', tonumber('755', 8))
  local server = vim.system({ 'python3', '-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '-d', tmp .. '/srv' }, { text = true,
    stdout = function() end })
  local port
  wait_for(function()
    local out = vim.system({ 'ss', '-ltnpH' }, { text = true }):wait().stdout or ''
    port = out:match('127%.0%.0%.1:(%d+)[^\n]*pid=' .. server.pid .. ',')
    return port
  end, 'the release server')
  return {
    clone = clone, tmp = tmp, sh = sh, publish = publish, url = 'http://127.0.0.1:' .. port,
    --- Lists `sum` in the clone's working tree, as a person's edit would.
    list = function(sum)
      vim.fn.writefile({ sum }, clone .. '/editors/nvim/checksums/v9.9.9.sha256')
    end,
    cargo = function()
      local log = vim.fn.filereadable(tmp .. '/cargo.log') == 1 and vim.fn.readfile(tmp .. '/cargo.log') or {}
      vim.fn.delete(tmp .. '/cargo.log')
      return log
    end,
    stop = function()
      server:kill('sigterm')
      vim.fn.delete(tmp, 'rf')
    end,
  }
end

local CARGO_BUILT = { 'metadata --format-version 1 --no-deps', 'build --release --locked -p ask-lsp' }

test('the build step at a release tag: the archive the repository lists is installed, no cargo; a swapped one with its own .sha256 is refused and cargo builds ask-lsp alone', function()
  local release = release_fixture()
  local env = { PATH = release.tmp .. '/bin:' .. os.getenv('PATH'), ASK_LSP_RELEASE_URL = release.url }
  local ok, err = pcall(function()
    local seen = child('prebuilt.lua', { release.clone }, env, 60000)
    eq({ version = 'ask-lsp 9.9.9 (prebuilt)', said = {} }, seen, 'downloaded')
    eq({}, release.cargo(), 'cargo not run')
    eq({ 'ask-lsp 9.9.9 (prebuilt)' }, vim.fn.systemlist({ release.clone .. '/editors/nvim/bin/ask-lsp' }), 'the installed binary')
    -- The host serves another archive, with a .sha256 that matches it.
    release.publish('file', 'swapped')
    seen = child('prebuilt.lua', { release.clone }, env, 60000)
    eq('ask-lsp 9.9.9 (built)', seen.version, 'built instead')
    assert(#seen.said == 1 and seen.said[1]:find('the v9.9.9 release was not installed %(ask%-lsp%-.*%.tar%.gz does not match the checksum the repository lists'), vim.inspect(seen.said))
    eq(CARGO_BUILT, release.cargo(), 'cargo run for ask-lsp alone')
    eq({ 'ask-lsp 9.9.9 (built)' }, vim.fn.systemlist({ release.clone .. '/editors/nvim/bin/ask-lsp' }), 'the installed binary')
  end)
  release.stop()
  assert(ok, err)
end)

test('the build step refuses a release the repository does not list, an archive whose ask-lsp is a link, and one with an entry outside its folder', function()
  local release = release_fixture()
  local env = { PATH = release.tmp .. '/bin:' .. os.getenv('PATH'), ASK_LSP_RELEASE_URL = release.url }
  local ok, err = pcall(function()
    local function refused(because)
      local seen = child('prebuilt.lua', { release.clone }, env, 60000)
      eq('ask-lsp 9.9.9 (built)', seen.version, 'built instead: ' .. because)
      assert(#seen.said == 1 and seen.said[1]:find(because, 1, true), vim.inspect(seen.said))
      eq(CARGO_BUILT, release.cargo(), 'cargo run')
    end
    -- No list names v9.9.9 (master without its checksum commit).
    release.sh({ 'git', 'branch', '-f', 'master', 'v9.9.9' }, release.clone)
    refused('is not in the repository\'s checksum list (editors/nvim/checksums/v9.9.9.sha256)')
    -- Listed, but its ask-lsp is a link to a file elsewhere.
    local elsewhere = release.tmp .. '/elsewhere'
    vim.fn.writefile({ '#!/bin/sh', 'echo "ask-lsp 9.9.9 (the link\'s target)"' }, elsewhere)
    vim.uv.fs_chmod(elsewhere, tonumber('755', 8))
    release.list(release.publish('link', elsewhere))
    refused('/ask-lsp is a link, not a file')
    -- Listed, but one entry climbs out of the folder.
    release.list(release.publish('outside'))
    refused('../ask-lsp is outside ask-lsp-')
  end)
  release.stop()
  assert(ok, err)
end)

test('the repository URL alone: a file:// clone at its tag, installed as lazy.nvim does the one-line spec, gets its binary and connects', function()
  local release = release_fixture(BIN)
  local dir = release.tmp .. '/lazy/ask-lsp'
  local ok, err = pcall(function()
    -- lazy.nvim: git clone, then (version = '*') check out the newest tag.
    release.sh({ 'git', 'clone', '--quiet', 'file://' .. release.clone, dir })
    release.sh({ 'git', 'checkout', '--quiet', 'v9.9.9' }, dir)
    local seen = child('lazy_url.lua', { dir }, {
      PATH = release.tmp .. '/bin:' .. os.getenv('PATH'), ASK_LSP_RELEASE_URL = release.url, ASK_SIM_URL = FOCUS,
    }, 60000)
    eq({ help = 'ask-lsp.txt', connected = true, cmd = { dir .. '/editors/nvim/bin/ask-lsp' }, commands = true }, seen, 'installed')
    eq({}, release.cargo(), 'no cargo: the release archive was used')
  end)
  release.stop()
  assert(ok, err)
end)

test('lazy.nvim-style install from a local clone: the build step makes the binary the plugin uses; :help ask-lsp opens', function()
  -- What a clone of this working tree holds (tracked and new files, no
  -- target/), copied so uncommitted changes are tested too. The same path
  -- and mtimes each run let cargo reuse its release build (a new path
  -- rebuilds ask-lsp itself).
  local clone = vim.fn.fnamemodify(vim.fn.tempname(), ':h:h') .. '/ask-lsp-nvim-lazy-clone'
  vim.fn.delete(clone, 'rf')
  local files = vim.system({ 'git', 'ls-files', '-z', '--cached', '--others', '--exclude-standard' }, { cwd = root, text = true }):wait().stdout
  for _, file in ipairs(vim.split(files, '\0', { trimempty = true })) do
    local stat = vim.uv.fs_stat(root .. '/' .. file)
    if stat then
      vim.fn.mkdir(vim.fs.dirname(clone .. '/' .. file), 'p')
      assert(vim.uv.fs_copyfile(root .. '/' .. file, clone .. '/' .. file))
      assert(vim.uv.fs_utime(clone .. '/' .. file, stat.atime.sec, stat.mtime.sec))
    end
  end
  -- $PATH without any ask-lsp: the plugin must find its own.
  local path = vim.tbl_filter(function(dir)
    return vim.fn.executable(dir .. '/ask-lsp') == 0
  end, vim.split(os.getenv('PATH'), ':'))
  local seen = child('lazy.lua', { clone }, { PATH = table.concat(path, ':'), ASK_SIM_URL = PLAIN }, 20 * 60 * 1000)
  local version = vim.system({ clone .. '/editors/nvim/bin/ask-lsp', '--version' }, { text = true }):wait()
  vim.fn.delete(clone, 'rf')
  eq({ seen.binary }, seen.cmd, 'the plugin runs the binary the build step made')
  eq(true, seen.connected, 'connected')
  assert(version.stdout:find('^ask%-lsp %d'), version.stdout)
  eq('ask-lsp.txt', seen.help.file, ':help ask-lsp: ' .. vim.inspect(seen.help))
  assert(seen.help.line:find('*ask-lsp*', 1, true), seen.help.line)
end)

test(':checkhealth reports the binary, a connected server and an auth failure', function()
  vim.cmd('checkhealth ask-lsp')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  assert(text:find('OK binary: ' .. BIN, 1, true), text)
  assert(text:find('hook command for Claude Code: ' .. BIN .. ' hook claude (:AskLsp hook claude', 1, true), text)
  assert(text:find('OK server sim (' .. SIM .. '): connected', 1, true), text)
  assert(text:find('ERROR server locked (' .. LOCKED .. '): OpenCode at ' .. LOCKED .. ': 401 Unauthorized', 1, true), text)
  assert(text:find('OPENCODE_SERVER_PASSWORD', 1, true), text)
  vim.cmd('bwipeout!')
end)

test(':AskLsp hook claude, codex, qwen or copilot gives the hook settings with the binary\'s full path, which runs where ask-lsp is not on $PATH', function()
  local path = '/usr/bin:/bin'
  assert(vim.fn.executable('/usr/bin/ask-lsp') == 0 and vim.fn.executable('/bin/ask-lsp') == 0, 'ask-lsp must not be in ' .. path)
  vim.fn.setreg('"', '')
  vim.cmd('AskLsp hook claude')
  local snippet = vim.fn.getreg('"')
  local command = vim.json.decode(snippet).hooks.PermissionRequest[1].hooks[1].command
  eq(BIN .. ' hook claude', command, 'the command in the settings')
  assert(notified[#notified].message:find('~/.claude/settings.json', 1, true), notified[#notified].message)
  assert(notified[#notified].message:find(vim.trim(snippet), 1, true), notified[#notified].message)
  -- As Claude Code runs a hook command (sh -c), with ask-lsp not on $PATH:
  -- the README's bare command is not found, this one runs.
  local bare = vim.system({ 'sh', '-c', 'ask-lsp hook claude' }, { env = { PATH = path }, stdin = '', text = true }):wait()
  eq(127, bare.code, 'the bare command: ' .. (bare.stderr or ''))
  local ran = vim.system({ 'sh', '-c', command }, { env = { PATH = path }, stdin = '', text = true }):wait()
  assert(ran.code ~= 127 and not (ran.stderr or ''):find('not found', 1, true), ran.code .. ' ' .. (ran.stderr or ''))
  vim.cmd('AskLsp hook codex')
  assert(vim.fn.getreg('"'):find('\ncommand = "' .. BIN .. ' hook codex"\ntimeout = 60', 1, true), vim.fn.getreg('"'))
  assert(notified[#notified].message:find('~/.codex/config.toml', 1, true), notified[#notified].message)
  -- Qwen Code and Copilot CLI, in the README's shapes.
  vim.cmd('AskLsp hook qwen')
  eq(BIN .. ' hook qwen', vim.json.decode(vim.fn.getreg('"')).hooks.PermissionRequest[1].hooks[1].command, 'qwen')
  vim.cmd('AskLsp hook copilot')
  eq(BIN .. ' hook copilot', vim.json.decode(vim.fn.getreg('"')).hooks.permissionRequest[1].bash, 'copilot')
  assert(notified[#notified].message:find('~/.copilot/hooks/ask-lsp.json', 1, true), notified[#notified].message)
end)

test(':checkhealth says when no server was configured and a default is followed', function()
  local seen = child('health.lua', { root }, { ASK_LSP_BIN = BIN, ASK_LSP_URL = PLAIN }, 60000)
  -- The default is no problem: said, not warned about.
  assert(seen.text:find('server default: none configured, so ask-lsp follows ' .. PLAIN, 1, true), seen.text)
  assert(not seen.text:find('WARNING', 1, true), seen.text)
  assert(seen.text:find('pending prompts (questions, permissions, forms): 0', 1, true), seen.text)
  assert(seen.text:find('OK server default (' .. PLAIN .. '): connected', 1, true), seen.text)
end)

-- ASK_LSP_NVIM_ONLY='text|other' runs only the tests whose name holds one.
local only = os.getenv('ASK_LSP_NVIM_ONLY')
local passed, failed = 0, 0
tests = vim.tbl_filter(function(t)
  return not only or vim.iter(vim.split(only, '|', { plain = true })):any(function(part)
    return t.name:find(part, 1, true) ~= nil
  end)
end, tests)
for _, t in ipairs(tests) do
  local ok, err = pcall(t.fn)
  -- Back in the repository (the diff specs make a project their cwd).
  vim.fn.chdir(root)
  -- Leave no prompt behind for the next test.
  local win = float_win()
  if win then
    vim.api.nvim_win_close(win, true)
  end
  if ok then
    passed = passed + 1
    io.stdout:write('ok   ' .. t.name .. '\n')
  else
    failed = failed + 1
    io.stdout:write('FAIL ' .. t.name .. '\n     ' .. tostring(err):gsub('\n', '\n     ') .. '\n')
  end
end
io.stdout:write(('%d passed, %d failed\n'):format(passed, failed))
local client = require('ask-lsp.client').get()
if client then
  client:stop(true)
end
os.exit(failed == 0 and 0 or 1)
