-- When a prompt takes the screen. A float that takes the cursor the moment
-- it arrives eats what the person was typing (the most common complaint
-- about the nearest alternative, nickjvandyke/opencode.nvim#211; its fix,
-- PR #304, waits until the user is idle). So a prompt is announced at once
-- (statusline count, vim.notify, `User AskLspPrompt`) and, by focus.mode:
--   'idle' (default): shown, focused, once the person has pressed no key for
--     focus.idle_ms and is in Normal mode;
--   'unfocused': shown at once in a float that does not take the cursor
--     (:AskLsp answer or <C-w>w goes into it);
--   'now': shown and focused at once (the behaviour before 0.3).
local config = require('ask-lsp.config')
local t = require('ask-lsp.i18n').t

local M = {}

--- When the person last pressed a key (vim.uv.now() milliseconds).
local last_key = vim.uv.now()
vim.on_key(function()
  last_key = vim.uv.now()
end, vim.api.nvim_create_namespace('ask-lsp.attention'))

--- The prompt announced but not shown yet: { prompt, timer }.
local waiting = nil

--- Idle: no key for `idle_ms`, in Normal mode (not typing, not in a
--- command line, not half-way through an operator or a mapping).
local function idle(idle_ms)
  local mode = vim.api.nvim_get_mode()
  return mode.mode == 'n' and not mode.blocking and vim.fn.getcmdwintype() == '' and vim.uv.now() - last_key >= idle_ms
end

local function stop_waiting()
  if waiting then
    waiting.timer:stop()
    waiting.timer:close()
    waiting = nil
  end
end

local function show(prompt)
  require('ask-lsp.ui').show(prompt)
end

local function announce(prompt)
  local title = require('ask-lsp.ui').request_title(prompt.params)
  vim.notify('ask-lsp: ' .. t('attention.waiting', { title = title }), vim.log.levels.INFO)
end

--- Shows `prompt` as focus.mode says.
function M.present(prompt)
  stop_waiting()
  local focus = config.options.focus
  if focus.mode == 'now' then
    return show(prompt)
  end
  if focus.mode == 'unfocused' then
    prompt.unfocused = true
    announce(prompt)
    return show(prompt)
  end
  if idle(focus.idle_ms) then
    return show(prompt)
  end
  announce(prompt)
  local timer = assert(vim.uv.new_timer())
  waiting = { prompt = prompt, timer = timer }
  -- Withdrawn (answered elsewhere) before it was shown: nothing to close.
  prompt.close = stop_waiting
  local every = math.max(50, math.floor(focus.idle_ms / 4))
  timer:start(every, every, vim.schedule_wrap(function()
    if waiting and waiting.prompt == prompt and idle(focus.idle_ms) then
      stop_waiting()
      prompt.close = nil
      show(prompt)
    end
  end))
end

--- :AskLsp answer while a prompt waits here: shows it now, or moves the
--- cursor into its unfocused float. False when there is none.
---@return boolean
function M.focus()
  if waiting then
    local prompt = waiting.prompt
    stop_waiting()
    prompt.close = nil
    show(prompt)
    return true
  end
  local current = require('ask-lsp.client').current
  if current and current.win and vim.api.nvim_win_is_valid(current.win) then
    vim.api.nvim_set_current_win(current.win)
    return true
  end
  return false
end

return M
