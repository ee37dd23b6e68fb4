-- For scripts/bench (time to a visible prompt): the Neovim plugin, headless,
-- following a real OpenCode with every question in the form's float, shown
-- at once (`focus = { mode = 'now' }`: the default, 'idle', waits for 1.5 s
-- without a key press). Three realtime stamps (ns, the clock Python's
-- time.time_ns reads) are appended to $BENCH_OUT per prompt: `request`
-- when the plugin's askQuestions/ask handler is called, `received` when it
-- has taken the request in (its `User AskLspPrompt`, one turn of the event
-- loop after), `shown` once the float is
-- open and filled (the next turn after the plugin names the float's
-- filetype, where a UI would redraw). The question is then rejected so the
-- agent's turn ends. Quits after $BENCH_PROMPTS floats.
local root = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h')
vim.opt.rtp:prepend(root .. '/editors/nvim')
vim.cmd.runtime('plugin/ask-lsp.lua')

local out = assert(io.open(assert(os.getenv('BENCH_OUT'), 'BENCH_OUT'), 'a'))
local want = tonumber(os.getenv('BENCH_PROMPTS') or '50')
local seen = 0
local function stamp(what)
  local now = vim.uv.clock_gettime('realtime')
  out:write(('%s %d%09d\n'):format(what, now.sec, now.nsec))
  out:flush()
end
-- `request`: the plugin's askQuestions/ask handler called (Neovim has read
-- and dispatched the request), taken by wrapping the handler the plugin
-- gives vim.lsp.start.
local start = vim.lsp.start
vim.lsp.start = function(config, ...)
  local ask = config.handlers and config.handlers['askQuestions/ask']
  if ask then
    -- A copy: the plugin's own table stays as it is.
    config.handlers = vim.tbl_extend('force', config.handlers, {
      ['askQuestions/ask'] = function(...)
        stamp('request')
        return ask(...)
      end,
    })
  end
  return start(config, ...)
end
vim.api.nvim_create_autocmd('User', {
  pattern = 'AskLspPrompt',
  callback = function()
    stamp('received')
  end,
})
-- The plugin names the float's buffer's filetype just before opening it.
vim.api.nvim_create_autocmd('FileType', {
  pattern = 'ask-lsp',
  callback = function()
    vim.schedule(function()
      stamp('shown')
      seen = seen + 1
      vim.cmd('AskLsp reject')
    end)
  end,
})
require('ask-lsp').setup({
  cmd = { (assert(os.getenv('ASK_LSP_BIN'), 'ASK_LSP_BIN')) },
  ui = 'float',
  focus = { mode = 'now' },
  servers = { { name = 'opencode', url = os.getenv('BENCH_OPENCODE_URL'), directory = os.getenv('BENCH_OPENCODE_DIR') } },
  -- Allows the bench's probe only (bench.py, time_to_visible).
  policy = vim.json.decode(os.getenv('BENCH_POLICY') or 'null'),
})
vim.wait(1800 * 1000, function()
  return seen >= want
end, 50)
vim.cmd('qa!')
