-- A form prompt (ACP elicitation): typed fields in a float, or, in url
-- mode, a link shown with its domain and whole, which only the person opens
-- (vim.ui.open, when they press o). Values are checked as they are entered
-- and again before sending; ask-lsp checks them once more (and patterns,
-- which are JavaScript regular expressions Lua cannot run) and asks again
-- with its reason when one fails.
local window = require('ask-lsp.ui.window')
local asker = require('ask-lsp.ui.permission').asker
local t = require('ask-lsp.i18n').t

local M = {}

--- A number as JSON Schema bounds are written: 1024, 0.5.
local function num(n)
  return n == math.floor(n) and ('%d'):format(n) or tostring(n)
end

--- The messages of a range of plain numbers, of characters, of choices.
local NUMBERS = { between = 'hint.between', at_least = 'hint.at_least', at_most = 'hint.at_most' }
local CHARACTERS = { between = 'hint.chars_between', at_least = 'hint.chars_at_least', at_most = 'hint.chars_at_most' }
local CHOICES = { between = 'hint.choices_between', at_least = 'hint.choices_at_least', at_most = 'hint.choices_at_most' }

--- "3–40 characters", "at least 3", "at most 40 choices", or nil.
local function range(min, max, keys)
  local bounds = { min = min and num(min), max = max and num(max) }
  if min and max then
    return t(keys.between, bounds)
  elseif min then
    return t(keys.at_least, bounds)
  elseif max then
    return t(keys.at_most, bounds)
  end
end

--- The formats' names as the person reads them (an unknown one as sent).
local FORMAT_NAMES = { email = 'format.email', uri = 'format.uri', date = 'format.date', ['date-time'] = 'format.date_time' }
local function format_name(format)
  return FORMAT_NAMES[format] and t(FORMAT_NAMES[format]) or format
end

--- What the field takes, for the person: "email · 3–40 characters · pattern ^a".
local function hint(field)
  local parts = {}
  local function add(part)
    if part then
      table.insert(parts, part)
    end
  end
  if field.type == 'text' then
    add(field.format and format_name(field.format) or t('hint.text'))
    add(range(field.minLength, field.maxLength, CHARACTERS))
    add(field.pattern and t('hint.pattern', { pattern = field.pattern }))
  elseif field.type == 'number' or field.type == 'integer' then
    add(field.type == 'integer' and t('hint.integer') or t('hint.number'))
    add(range(field.minimum, field.maximum, NUMBERS))
  elseif field.type == 'boolean' then
    add(t('hint.boolean'))
  elseif field.type == 'choice' then
    add(t('hint.choice'))
  elseif field.type == 'multi' then
    add(t('hint.multi'))
    add(range(field.minItems, field.maxItems, CHOICES))
  end
  return table.concat(parts, ' · ')
end

local function digits(s, n)
  return #s == n and s:match('^%d+$') and tonumber(s) or nil
end

-- The formats' shapes, as ask-lsp checks them (src/prompt/form.rs).
local function date_ok(s)
  local y, m, d = s:match('^(%d%d%d%d)%-(%d%d)%-(%d%d)$')
  if not y then
    return false
  end
  y, m, d = tonumber(y), tonumber(m), tonumber(d)
  local leap = y % 4 == 0 and (y % 100 ~= 0 or y % 400 == 0)
  local days = ({ 31, leap and 29 or 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 })[m]
  return days ~= nil and d >= 1 and d <= days
end

local function time_ok(s)
  local at = s:find('[Zz+-]')
  if not at then
    return false
  end
  local clock, zone = s:sub(1, at - 1), s:sub(at)
  local hms, frac = clock:match('^([^.]*)%.(.*)$')
  hms, frac = hms or clock, frac or '0'
  local h, m, sec = hms:match('^(%d%d):(%d%d):(%d%d)$')
  local clock_ok = h and tonumber(h) < 24 and tonumber(m) < 60 and tonumber(sec) <= 60 and frac:match('^%d+$') ~= nil
  local zone_ok = zone == 'Z' or zone == 'z'
  if not zone_ok then
    local zh, zm = zone:sub(2):match('^(%d%d):(%d%d)$')
    zone_ok = zh ~= nil and digits(zh, 2) < 24 and digits(zm, 2) < 60
  end
  return clock_ok and zone_ok or false
end

local FORMATS = {
  email = function(s)
    local localpart, domain = s:match('^(.*)@([^@]*)$')
    return localpart ~= nil and localpart ~= '' and not s:find('%s') and domain:find('.', 1, true) ~= nil
      and domain:sub(1, 1) ~= '.' and domain:sub(-1) ~= '.'
  end,
  uri = function(s)
    return s:match('^%a[%w+.-]*:.') ~= nil and not s:find('[%s%c]')
  end,
  date = date_ok,
  ['date-time'] = function(s)
    local date, time = s:match('^(.-)[Tt](.*)$')
    return date ~= nil and date_ok(date) and time_ok(time)
  end,
}

--- Why `value` does not fit `field` (a sentence naming its title), or nil.
local function problem(field, value)
  local function say(key, vars)
    return t(key, vim.tbl_extend('force', { title = field.title }, vars or {}))
  end
  if value == nil then
    return field.required and say('problem.required') or nil
  end
  if field.type == 'text' then
    local len = vim.fn.strchars(value)
    if field.minLength and len < field.minLength then
      return say('problem.min_chars', { min = field.minLength })
    elseif field.maxLength and len > field.maxLength then
      return say('problem.max_chars', { max = field.maxLength })
    elseif field.format and FORMATS[field.format] and not FORMATS[field.format](value) then
      return say('problem.format', { format = format_name(field.format) })
    end
  elseif field.type == 'number' or field.type == 'integer' then
    if type(value) ~= 'number' or value ~= value or math.abs(value) == math.huge then
      return say('problem.not_number')
    elseif field.type == 'integer' and value ~= math.floor(value) then
      return say('problem.not_integer')
    elseif field.minimum and value < field.minimum then
      return say('problem.min', { min = num(field.minimum) })
    elseif field.maximum and value > field.maximum then
      return say('problem.max', { max = num(field.maximum) })
    end
  elseif field.type == 'multi' then
    if field.minItems and #value < field.minItems then
      return say('problem.min_choices', { min = field.minItems })
    elseif field.maxItems and #value > field.maxItems then
      return say('problem.max_choices', { max = field.maxItems })
    end
  end
end

local Form = {}
Form.__index = Form

---@param prompt { params: ask-lsp.AskParams, respond: fun(result: table), close?: fun() }
function M.show(prompt)
  local form = prompt.params.form
  local self = setmetatable({ prompt = prompt, form = form, values = {}, typed = {}, stop = 1 }, Form)
  for i, field in ipairs(form.fields) do
    self.values[i] = vim.deepcopy(field.default)
  end
  self.window = window.open(prompt, function()
    -- Closed some other way (:q): it stays pending.
    prompt.respond({ outcome = 'deferred' })
  end)
  prompt.close = function()
    self.window:close()
  end
  self:keys()
  self:render()
  return self
end

function Form:finish(result)
  self.prompt.respond(result)
  self.window:close()
end

--- The field's value as it is shown and sent: typed text that is not a
--- number stays text (and is refused) rather than being lost.
function Form:value(i)
  if self.typed[i] ~= nil then
    return self.typed[i]
  end
  return self.values[i]
end

function Form:render()
  local form, width = self.form, window.width() - 2
  local lines, marks, stops = {}, {}, {}
  local function add(list, group)
    for _, line in ipairs(list) do
      table.insert(lines, line)
      if group then
        table.insert(marks, { #lines, group })
      end
    end
  end
  local title = form.url and t('form.link_title') or (self.reviewing and t('form.review_title') or t('form.title'))
  add(window.wrap(title, width), 'AskLspTitle')
  add(window.wrap(form.message, width))
  add(window.wrap(asker(self.prompt.params), width), 'AskLspDescription')
  if self.reviewing then
    self:render_review(lines, add, width)
  elseif form.url then
    add({ '' })
    add(window.wrap(t('form.domain', { domain = form.url.domain }), width), 'AskLspDomain')
    add({ t('form.url') }, 'AskLspTitle')
    add(window.indent(window.cut(form.url.url, width - 2), '  '))
    add({ '' })
    add(window.wrap(t('form.link_help'), width), 'AskLspHelp')
    self.window:set(lines)
    self.stops = {}
  else
    for i, field in ipairs(form.fields) do
      add({ '' })
      local head = ('%d. %s%s'):format(i, field.title, field.required and ' *' or '')
      add(window.wrap(head .. ' — ' .. hint(field), width), 'AskLspOption')
      if field.description ~= '' then
        add(window.indent(window.wrap(field.description, width - 3), '   '), 'AskLspDescription')
      end
      local value = self:value(i)
      if field.type == 'choice' or field.type == 'multi' then
        local picked = {}
        for _, v in ipairs(field.type == 'multi' and (value or {}) or { value }) do
          picked[v] = true
        end
        for j, option in ipairs(field.options) do
          local mark = field.type == 'multi' and (picked[option.value] and '[x]' or '[ ]') or (picked[option.value] and '(•)' or '( )')
          table.insert(stops, { field = i, option = j, line = #lines + 1 })
          local about = (option.description or '') ~= '' and (' — ' .. option.description) or ''
          add(window.indent(window.wrap(mark .. ' ' .. option.label .. about, width - 3), '   '), picked[option.value] and 'AskLspSelected' or nil)
        end
      elseif field.type == 'boolean' then
        local shown = value == nil and ('[ ] ' .. t('form.not_set')) or (value and ('[x] ' .. t('form.yes')) or ('[ ] ' .. t('form.no')))
        table.insert(stops, { field = i, line = #lines + 1 })
        add({ '   ' .. shown })
      else
        table.insert(stops, { field = i, line = #lines + 1 })
        local text = value == nil and t('form.empty') or tostring(type(value) == 'number' and num(value) or value)
        add(window.indent(window.cut('> ' .. text, width - 3), '   '))
      end
      -- A wrong value is marked at once; a missing one after a try to send.
      local why = (value ~= nil or self.shown_problems) and problem(field, value)
      if why then
        add(window.indent(window.wrap('⚠ ' .. why, width - 3), '   '), 'AskLspError')
      end
    end
    add({ '' })
    add(window.wrap(t('form.help'), width), 'AskLspHelp')
    self.window:set(lines)
    self.stops = stops
    self.stop = math.max(1, math.min(self.stop, #stops))
    if stops[self.stop] then
      self.window:cursor(stops[self.stop].line)
    end
  end
  for _, mark in ipairs(marks) do
    self.window:mark(mark[1], 0, nil, mark[2])
  end
end

--- A value as the review shows it: option labels, yes/no, the text.
function Form:shown(i)
  local field, value = self.form.fields[i], self:value(i)
  if value == nil then
    return t('form.empty')
  end
  local function label(v)
    for _, option in ipairs(field.options or {}) do
      if option.value == v then
        return option.label
      end
    end
    return tostring(v)
  end
  if field.type == 'choice' then
    return label(value)
  elseif field.type == 'multi' then
    return #value == 0 and t('form.none') or table.concat(vim.tbl_map(label, value), ', ')
  elseif field.type == 'boolean' then
    return value and t('form.yes') or t('form.no')
  end
  return type(value) == 'number' and num(value) or tostring(value)
end

--- Every field and the value that would be sent, then the Send row.
function Form:render_review(lines, add, width)
  local stops = {}
  for i, field in ipairs(self.form.fields) do
    add({ '' })
    table.insert(stops, { field = i, line = #lines + 1 })
    add(window.wrap(('%d. %s'):format(i, field.title), width), 'AskLspOption')
    add(window.indent(window.cut(self:shown(i), width - 3), '   '))
  end
  add({ '' })
  table.insert(stops, { send = true, line = #lines + 1 })
  add({ '[s] ' .. t('form.send') }, 'AskLspOption')
  add(window.wrap(t('form.review_help'), width), 'AskLspHelp')
  self.window:set(lines)
  self.stops = stops
  self.stop = math.max(1, math.min(self.stop, #stops))
  self.window:cursor(stops[self.stop].line)
end

--- Into the review (the number keys pick a field to change) or out of it.
function Form:review(on)
  self.reviewing = on
  for n = 1, math.min(9, #self.form.fields) do
    if on then
      self.window:map(tostring(n), function()
        self:change(n)
      end)
    else
      pcall(vim.keymap.del, 'n', tostring(n), { buffer = self.window.buf })
    end
  end
  self.stop = on and #self.form.fields + 1 or 1
  self:render()
end

--- From the review back to field `i` of the form; a text or number field
--- asks for its new value at once.
function Form:change(i)
  self:review(false)
  for s, stop in ipairs(self.stops) do
    if stop.field == i then
      self.stop = s
      break
    end
  end
  self:render()
  local field = self.form.fields[i]
  if field.type == 'text' or field.type == 'number' or field.type == 'integer' then
    self:type(i, field)
  end
end

function Form:keys()
  local win = self.window
  local function map(lhs, fn)
    win:map(lhs, fn)
  end
  for _, lhs in ipairs({ 'q', '<Esc>' }) do
    map(lhs, function()
      self:finish({ outcome = 'deferred' })
    end)
  end
  map('d', function()
    self:finish({ outcome = 'rejected' })
  end)
  if self.form.url then
    local url = self.form.url.url
    map('o', function()
      local _, err = vim.ui.open(url)
      if err then
        vim.notify('ask-lsp: ' .. t('form.cannot_open', { error = err }), vim.log.levels.ERROR)
        return
      end
      self:finish({ outcome = 'answered', values = vim.empty_dict() })
    end)
    map('a', function()
      self:finish({ outcome = 'answered', values = vim.empty_dict() })
    end)
    map('y', function()
      vim.fn.setreg('"', url)
      pcall(vim.fn.setreg, '+', url)
      vim.notify('ask-lsp: ' .. t('form.copied'))
    end)
    return
  end
  map('j', function() self:move(1) end)
  map('<Down>', function() self:move(1) end)
  map('k', function() self:move(-1) end)
  map('<Up>', function() self:move(-1) end)
  map('<Tab>', function() self:next_field(1) end)
  map('<S-Tab>', function() self:next_field(-1) end)
  map('<CR>', function() self:act() end)
  map('<Space>', function() self:act() end)
  map('x', function() self:clear() end)
  map('s', function() self:send() end)
  map('b', function()
    if self.reviewing then
      self:review(false)
    end
  end)
end

--- The stop under the cursor (the person may have moved it with any
--- motion): the last one at or above its line.
function Form:sync()
  local row = vim.api.nvim_win_get_cursor(self.window.win)[1]
  self.stop = 1
  for s, stop in ipairs(self.stops) do
    if stop.line <= row then
      self.stop = s
    end
  end
end

function Form:move(delta)
  self:sync()
  if #self.stops > 0 then
    self.stop = (self.stop - 1 + delta) % #self.stops + 1
    self:render()
  end
end

--- The first stop of the next (or previous) field, round the end.
function Form:next_field(delta)
  self:sync()
  local firsts, current = {}, 1
  for s, stop in ipairs(self.stops) do
    if s == 1 or self.stops[s - 1].field ~= stop.field then
      table.insert(firsts, s)
    end
    if s == self.stop then
      current = #firsts
    end
  end
  if #firsts > 0 then
    self.stop = firsts[(current - 1 + delta) % #firsts + 1]
    self:render()
  end
end

function Form:clear()
  if self.reviewing then
    return
  end
  self:sync()
  local i = self.stops[self.stop].field
  self.values[i], self.typed[i] = nil, nil
  self:render()
end

--- <CR>/<Space>: type a text or number, toggle a yes/no, pick or toggle an option.
function Form:act()
  self:sync()
  local stop = self.stops[self.stop]
  if self.reviewing then
    return stop.send and self:send() or self:change(stop.field)
  end
  local i, field = stop.field, self.form.fields[stop.field]
  if field.type == 'boolean' then
    self.values[i] = not self.values[i]
  elseif field.type == 'choice' then
    local value = field.options[stop.option].value
    -- Picking the chosen option again clears an optional field.
    self.values[i] = (self.values[i] ~= value or field.required) and value or nil
  elseif field.type == 'multi' then
    local value = field.options[stop.option].value
    local list = vim.tbl_filter(function(v)
      return v ~= value
    end, self.values[i] or {})
    if #list == #(self.values[i] or {}) then
      table.insert(list, value)
    end
    self.values[i] = list
  else
    return self:type(i, field)
  end
  self:render()
end

function Form:type(i, field)
  local current = self:value(i)
  vim.ui.input({
    prompt = window.one_line(t('form.input_prompt', { title = field.title, hint = hint(field) })),
    default = current ~= nil and tostring(type(current) == 'number' and num(current) or current) or nil,
  }, function(text)
    if text == nil or not self.window:valid() then
      return
    end
    text = vim.trim(text)
    self.values[i], self.typed[i] = nil, nil
    if text ~= '' then
      if field.type == 'text' then
        self.values[i] = text
      elseif text:match('^[-+]?%d*%.?%d+[eE]?[-+]?%d*$') and tonumber(text) then
        -- Decimal only: Lua would also read 0x10 as 16.
        self.values[i] = tonumber(text)
      else
        self.typed[i] = text
      end
    end
    local why = problem(field, self:value(i))
    if why and self:value(i) ~= nil then
      vim.notify('ask-lsp: ' .. why, vim.log.levels.WARN)
    end
    self:render()
  end)
end

--- Sends the values when every field is right (a form of several fields
--- after a review of them all: ACP's elicitation spec asks clients to let
--- people review and change what they send); else says what is wrong
--- (beside each field too) and moves to the first.
function Form:send()
  local values, problems, first = vim.empty_dict(), {}, nil
  for i, field in ipairs(self.form.fields) do
    local value = self:value(i)
    local why = problem(field, value)
    if why then
      table.insert(problems, why)
      first = first or i
    elseif value ~= nil then
      values[field.id] = value
    end
  end
  if #problems > 0 then
    self.shown_problems = true
    for s, stop in ipairs(self.stops) do
      if stop.field == first then
        self.stop = s
        break
      end
    end
    self:render()
    vim.notify('ask-lsp: ' .. t('form.not_sent') .. '\n' .. table.concat(problems, '\n'), vim.log.levels.WARN)
    return
  end
  if #self.form.fields > 1 and not self.reviewing then
    return self:review(true)
  end
  self:finish({ outcome = 'answered', values = values })
end

return M
