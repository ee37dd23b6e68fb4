-- A permission prompt ("may the agent run this?"): a float that shows what
-- would be allowed in full — the action, the whole command, every pattern or
-- file, the diff of an edit — and the session asking. Long text is cut into
-- lines, never shortened; the window scrolls (j/k, <C-d>/<C-u>). Nothing is
-- allowed but by a key the person presses: closing it (q, <Esc>, :q) leaves
-- the permission pending.
local window = require('ask-lsp.ui.window')
local t = require('ask-lsp.i18n').t

local M = {}

--- The letter that picks the first choice with each effect.
local LETTER = { allowOnce = 'o', allowAlways = 'a', rejectOnce = 'r', rejectAlways = 'R' }

--- "session ses_… · server · agent build · /project": who is asking.
local function asker(params)
  local session = params.sessionID ~= '' and params.sessionID or t('asker.no_session')
  local parts = { t('asker.session', { id = session }), t('asker.server', { name = params.server }) }
  if params.origin and params.origin.agent then
    table.insert(parts, t('asker.agent', { name = params.origin.agent }))
  end
  if params.source and params.source.directory then
    table.insert(parts, params.source.directory)
  end
  return table.concat(parts, ' · ')
end
M.asker = asker

--- Which key picks which choice: 1-9 by position, letters by effect.
---@return table<integer, string> letters by position
---@return table<string, table> choices by letter
function M.letters(permission)
  local letters, by_letter = {}, {}
  for i, choice in ipairs(permission.choices) do
    local letter = LETTER[choice.effect]
    if letter and not by_letter[letter] then
      by_letter[letter] = choice
      letters[i] = letter
    end
  end
  return letters, by_letter
end

--- "[1/o] Allow once", … and the rejects every prompt has.
function M.choice_labels(permission)
  local letters, by_letter = M.letters(permission)
  local lines = {}
  for i, choice in ipairs(permission.choices) do
    local key = letters[i] and (i .. '/' .. letters[i]) or tostring(i)
    table.insert(lines, ('[%s] %s'):format(key, choice.label))
  end
  if not by_letter.r then
    table.insert(lines, '[r] ' .. t('permission.reject'))
  end
  table.insert(lines, '[m] ' .. t('permission.reject_why'))
  return lines
end

--- Maps the deciding keys with `map(lhs, fn)`: 1-9 and the letters pick a
--- choice, r rejects, m rejects with a reason, q and <Esc> leave it pending.
--- `finish(result)` sends and closes.
function M.bind(map, permission, finish)
  local _, by_letter = M.letters(permission)
  local function choose(choice)
    finish({ outcome = 'answered', choice = choice.id })
  end
  for i, choice in ipairs(permission.choices) do
    if i <= 9 then
      map(tostring(i), function()
        choose(choice)
      end)
    end
  end
  for letter, choice in pairs(by_letter) do
    map(letter, function()
      choose(choice)
    end)
  end
  if not by_letter.r then
    map('r', function()
      finish({ outcome = 'rejected' })
    end)
  end
  map('m', function()
    vim.ui.input({ prompt = t('permission.reason_prompt') }, function(text)
      text = text and vim.trim(text) or ''
      if text ~= '' then
        finish({ outcome = 'rejected', message = text })
      end
    end)
  end)
  for _, lhs in ipairs({ 'q', '<Esc>' }) do
    map(lhs, function()
      finish({ outcome = 'deferred' })
    end)
  end
end

---@param prompt { params: ask-lsp.AskParams, respond: fun(result: table), close?: fun() }
function M.show(prompt)
  local params = prompt.params
  local permission = params.permission
  local win = window.open(prompt, function()
    -- Closed some other way (:q): it stays pending, never allowed.
    prompt.respond({ outcome = 'deferred' })
  end)
  local function finish(result)
    prompt.respond(result)
    win:close()
  end
  prompt.close = function()
    win:close()
  end

  local width = window.width() - 2
  local lines, marks = {}, {}
  local function add(list, group)
    for _, line in ipairs(list) do
      table.insert(lines, line)
      if group then
        table.insert(marks, { #lines, group })
      end
    end
  end
  local function section(title, text)
    add({ title }, 'AskLspTitle')
    add(window.indent(window.cut(text, width - 2), '  '))
  end
  add(window.wrap(t('permission.head', { action = permission.action }), width), 'AskLspTitle')
  add(window.wrap(permission.title ~= '' and permission.title or params.title, width))
  add(window.wrap(asker(params), width), 'AskLspDescription')
  add({ '' })
  if permission.command then
    section(t('permission.command'), permission.command)
  end
  if #permission.patterns > 0 then
    local edit = permission.action == 'edit' or permission.action == 'write'
    section(edit and t('permission.files') or t('permission.patterns'), table.concat(permission.patterns, '\n'))
  end
  if permission.diff then
    add({ t('permission.diff') }, 'AskLspTitle')
    for _, line in ipairs(window.cut(permission.diff, width - 2)) do
      local first = line:sub(1, 1)
      local group = (first == '+' and 'AskLspAdded') or (first == '-' and 'AskLspRemoved') or nil
      add({ '  ' .. line }, group)
    end
    -- Why the diff is alone: the file it names was not opened.
    if prompt.file_note then
      add(window.wrap(prompt.file_note, width), 'AskLspRemoved')
    end
  end
  add({ '' })
  for _, line in ipairs(M.choice_labels(permission)) do
    add(window.wrap(line, width), 'AskLspOption')
  end
  add(window.wrap(t('permission.help'), width), 'AskLspHelp')
  win:set(lines)
  for _, mark in ipairs(marks) do
    win:mark(mark[1], 0, nil, mark[2])
  end

  M.bind(function(lhs, fn)
    win:map(lhs, fn)
  end, permission, finish)
end

return M
