-- The question form: a floating window for multi-select and several
-- questions per request, with the keys OpenCode's TUI uses. Unlike
-- vim.ui.select it can be closed from code (answered elsewhere).
local ui = require('ask-lsp.ui')
local window = require('ask-lsp.ui.window')
local asker = require('ask-lsp.ui.permission').asker
local t = require('ask-lsp.i18n').t

local M = {}

local wrap = window.wrap

local Form = {}
Form.__index = Form

function M.show(prompt)
  local questions = prompt.params.questions
  local self = setmetatable({
    prompt = prompt,
    questions = questions,
    index = 1,
    cursor = {},
    picked = {},
    typed = {},
  }, Form)
  for i = 1, #questions do
    self.cursor[i] = 1
    self.picked[i] = {}
  end
  self:open()
  prompt.close = function()
    self:close()
  end
  return self
end

--- Rows a question offers: its options, then "Other…" when typing is allowed.
function Form:rows()
  local question = self.questions[self.index]
  return #question.options + (question.custom and 1 or 0)
end

function Form:is_other(row)
  return row > #self.questions[self.index].options
end

function Form:render()
  local width = window.width() - 2
  local question = self.questions[self.index]
  local total = #self.questions
  local lines, option_line, spans = {}, {}, {}
  local head = total > 1 and t('question.head_of', { index = self.index, total = total }) or t('question.head')
  if question.header ~= '' then
    head = head .. ' · ' .. question.header
  end
  if question.multiple then
    head = t('question.pick_any', { head = head })
  end
  vim.list_extend(lines, wrap(head, width))
  -- Who asks: session, server, agent, project (as the permission float).
  local who = wrap(asker(self.prompt.params), width)
  local who_rows = { first = #lines + 1, last = #lines + #who }
  vim.list_extend(lines, who)
  vim.list_extend(lines, wrap(question.question, width))
  table.insert(lines, '')
  for i, option in ipairs(question.options) do
    local mark
    if question.multiple then
      mark = self.picked[self.index][i] and '[x]' or '[ ]'
    else
      mark = self.picked[self.index][i] and '(•)' or '( )'
    end
    local text = ('%d. %s %s'):format(i, mark, ui.describe(option))
    option_line[i] = #lines + 1
    vim.list_extend(lines, wrap(text, width))
    table.insert(spans, { first = option_line[i], last = #lines, picked = self.picked[self.index][i] })
  end
  if question.custom then
    local typed = self.typed[self.index]
    option_line[#question.options + 1] = #lines + 1
    -- Typed text may hold newlines (a vim.ui.input of a plugin's may allow them).
    -- A secret is never drawn: only that it was typed.
    local shown = typed and question.secret and t('question.secret_typed') or typed
    vim.list_extend(lines, wrap(typed and ('c. [✎] ' .. shown) or ('c. ' .. t('question.other')), width))
  end
  table.insert(lines, '')
  local help = wrap(t('question.help'), width)
  vim.list_extend(lines, help)
  self.option_line = option_line
  self.window:set(lines)
  self:highlight(lines, spans, #help, who_rows)
  local row = math.min(self.cursor[self.index], math.max(self:rows(), 1))
  if option_line[row] then
    self.window:cursor(option_line[row])
  end
end

--- Title and help lines; each option's label (AskLspSelected once picked)
--- and its description, from " — " on, wrapped lines included.
function Form:highlight(lines, spans, help_lines, who_rows)
  local function mark(row, from, to, group)
    self.window:mark(row, from, to, group)
  end
  mark(1, 0, #lines[1], 'AskLspTitle')
  for row = who_rows.first, who_rows.last do
    mark(row, 0, #lines[row], 'AskLspDescription')
  end
  for _, span in ipairs(spans) do
    local line = lines[span.first]
    local sep = line:find(' — ', 1, true)
    mark(span.first, 0, sep and sep - 1 or #line, span.picked and 'AskLspSelected' or 'AskLspOption')
    if sep then
      mark(span.first, sep - 1, #line, 'AskLspDescription')
    end
    for row = span.first + 1, span.last do
      mark(row, 0, #lines[row], 'AskLspDescription')
    end
  end
  for row = #lines - help_lines + 1, #lines do
    mark(row, 0, #lines[row], 'AskLspHelp')
  end
end

function Form:open()
  -- Closed some other way (:q): the question stays pending.
  self.window = window.open(self.prompt, function()
    self.prompt.respond({ outcome = 'deferred' })
  end)
  local function map(lhs, fn)
    self.window:map(lhs, fn)
  end
  map('j', function() self:move(1) end)
  map('<Down>', function() self:move(1) end)
  map('k', function() self:move(-1) end)
  map('<Up>', function() self:move(-1) end)
  for n = 1, 9 do
    map(tostring(n), function() self:pick(n) end)
  end
  map('<Space>', function() self:pick(self.cursor[self.index]) end)
  map('<CR>', function() self:enter() end)
  map('<Tab>', function() self:go(1) end)
  map('<S-Tab>', function() self:go(-1) end)
  map('c', function() self:type() end)
  map('<Esc>', function() self:finish({ outcome = 'rejected' }) end)
  map('q', function() self:finish({ outcome = 'deferred' }) end)
  self:render()
end

function Form:close()
  self.window:close()
end

function Form:finish(result)
  self.prompt.respond(result)
  self:close()
end

function Form:move(delta)
  local rows = self:rows()
  if rows == 0 then
    return
  end
  self.cursor[self.index] = (self.cursor[self.index] - 1 + delta) % rows + 1
  self:render()
end

function Form:go(delta)
  self.index = math.max(1, math.min(#self.questions, self.index + delta))
  self:render()
end

function Form:pick(row)
  local question = self.questions[self.index]
  if row > self:rows() then
    return
  end
  self.cursor[self.index] = row
  if self:is_other(row) then
    return self:type()
  end
  if question.multiple then
    self.picked[self.index][row] = not self.picked[self.index][row] or nil
    self:render()
  else
    self.picked[self.index] = { [row] = true }
    self.typed[self.index] = nil
    self:picked_one()
  end
end

--- After a single-select answer: the next question; on the last of several,
--- stay for a review (<CR> submits); a lone question is sent at once.
function Form:picked_one()
  if #self.questions > 1 and self.index == #self.questions then
    self:render()
  else
    self:advance()
  end
end

function Form:enter()
  local question = self.questions[self.index]
  local row = self.cursor[self.index]
  if self:is_other(row) then
    return self:type()
  end
  if not question.multiple and next(self.picked[self.index]) == nil and not self.typed[self.index] then
    return self:pick(row)
  end
  self:advance()
end

function Form:type()
  local question = self.questions[self.index]
  if not question.custom then
    vim.notify('ask-lsp: ' .. t('question.options_only'), vim.log.levels.WARN)
    return
  end
  local index = self.index
  local function typed(text)
    -- A secret goes exactly as typed (a space may be part of it).
    text = text and (question.secret and text or vim.trim(text)) or ''
    self.typed[index] = text ~= '' and text or nil
    if not question.multiple and self.typed[index] then
      self.picked[index] = {}
    end
    if self.window:valid() then
      if not question.multiple and self.typed[index] then
        self:picked_one()
      else
        self:render()
      end
    end
  end
  if question.secret then
    -- Typed masked, kept in no history; Esc or <C-c> gives ''.
    local ok, text = pcall(vim.fn.inputsecret, t('question.secret_prompt'))
    return typed(ok and text or nil)
  end
  vim.ui.input({ prompt = t('question.answer_prompt'), default = self.typed[index] }, typed)
end

--- Next question, or submit after the last.
function Form:advance()
  if self.index < #self.questions then
    self.index = self.index + 1
    self:render()
  else
    self:submit()
  end
end

function Form:submit()
  local answers = {}
  for i, question in ipairs(self.questions) do
    local answer = {}
    for row = 1, #question.options do
      if self.picked[i][row] then
        table.insert(answer, question.options[row].label)
      end
    end
    if self.typed[i] then
      table.insert(answer, self.typed[i])
    end
    if not question.multiple and #answer ~= 1 then
      self.index = i
      self:render()
      vim.notify('ask-lsp: ' .. t('question.needs_answer', { index = i }), vim.log.levels.WARN)
      return
    end
    answers[i] = answer
  end
  self:finish({ outcome = 'answered', answers = answers })
end

return M
