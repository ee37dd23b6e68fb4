-- For scripts/bench (time to a visible prompt): the Neovim plugin, headless,
-- following a real OpenCode with every question in the form's float. Each
-- time a float opens, the monotonic clock (ns, the clock Python's
-- time.monotonic_ns reads) is appended to $BENCH_OUT once the float is
-- filled (the next turn of the event loop, where a UI would redraw), and the
-- question is rejected so the agent's turn ends. Quits after $BENCH_PROMPTS
-- floats.
local root = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h')
vim.opt.rtp:prepend(root .. '/editors/nvim')
vim.cmd.runtime('plugin/ask-lsp.lua')

local out = assert(io.open(assert(os.getenv('BENCH_OUT'), 'BENCH_OUT'), 'a'))
local want = tonumber(os.getenv('BENCH_PROMPTS') or '50')
local seen = 0
-- The plugin names the float's buffer's filetype just before opening it.
vim.api.nvim_create_autocmd('FileType', {
  pattern = 'ask-lsp',
  callback = function()
    vim.schedule(function()
      out:write(tostring(vim.uv.hrtime()) .. '\n')
      out:flush()
      seen = seen + 1
      vim.cmd('AskLsp reject')
    end)
  end,
})
require('ask-lsp').setup({
  cmd = { (assert(os.getenv('ASK_LSP_BIN'), 'ASK_LSP_BIN')) },
  ui = 'float',
  servers = { { name = 'opencode', url = os.getenv('BENCH_OPENCODE_URL'), directory = os.getenv('BENCH_OPENCODE_DIR') } },
})
vim.wait(1800 * 1000, function()
  return seen >= want
end, 50)
vim.cmd('qa!')
