-- What the floating prompts share: agent text made into lines that fit the
-- window, the window itself, its keys and highlights.
local config = require('ask-lsp.config')

local M = {}

M.ns = vim.api.nvim_create_namespace('ask-lsp')

--- Text as buffer lines: split at newlines (a buffer line cannot hold one),
--- other control characters shown as spaces. ask-lsp removes them already;
--- this keeps a server that does not from garbling the window.
---@param text string?
---@return string[]
function M.lines(text)
  local lines = {}
  for _, line in ipairs(vim.split(text or '', '\n', { plain = true })) do
    table.insert(lines, (line:gsub('[%z\1-\31\127]', ' ')))
  end
  return lines
end

--- Text on one line (for a prompt of vim.ui.input).
function M.one_line(text)
  return table.concat(M.lines(text), ' ')
end

local cells = vim.fn.strdisplaywidth

--- `text` split after at most `width` display cells (at least one
--- character, so a wide one in a 1-cell width still moves on); never inside
--- a character.
---@return string head
---@return string rest
local function split_cells(text, width)
  local used, stop = 0, 0
  for _, char in ipairs(vim.fn.split(text, '\\zs')) do
    local w = vim.api.nvim_strwidth(char)
    if used + w > width and stop > 0 then
      break
    end
    used, stop = used + w, stop + #char
  end
  return text:sub(1, stop), text:sub(stop + 1)
end

-- Chinese and Japanese text has no spaces: a line may break before and after
-- a wide character, except before closing punctuation and after opening
-- punctuation, which stay with their text.
local CLOSING, OPENING = {}, {}
for _, char in ipairs(vim.fn.split('，。、；：！？）」』】》〉”’…,.;:!?)]}', '\\zs')) do
  CLOSING[char] = true
end
for _, char in ipairs(vim.fn.split('（「『【《〈“‘([{', '\\zs')) do
  OPENING[char] = true
end

--- A word (no spaces) as the pieces a line may break between.
local function pieces(word)
  if not word:find('[\128-\255]') then
    return { word }
  end
  local list, current, wide_before, before = {}, '', false, nil
  for _, char in ipairs(vim.fn.split(word, '\\zs')) do
    local wide = vim.api.nvim_strwidth(char) > 1
    if current ~= '' and (wide or wide_before) and not CLOSING[char] and not OPENING[before] then
      table.insert(list, current)
      current = ''
    end
    current, wide_before, before = current .. char, wide, char
  end
  table.insert(list, current)
  return list
end

--- Prose broken into lines of at most `width` display cells: on spaces, and
--- between wide (CJK) characters; a word wider than a line is cut.
function M.wrap(text, width)
  local lines = {}
  for _, paragraph in ipairs(M.lines(text)) do
    local line = ''
    for word in paragraph:gmatch('%S+') do
      for i, piece in ipairs(pieces(word)) do
        local sep = (i == 1 and line ~= '') and ' ' or ''
        if line ~= '' and cells(line .. sep .. piece) > width then
          table.insert(lines, line)
          line, sep = '', ''
        end
        while cells(piece) > width and vim.fn.strchars(piece) > 1 do
          local head
          head, piece = split_cells(piece, width)
          table.insert(lines, head)
        end
        line = line .. sep .. piece
      end
    end
    table.insert(lines, line)
  end
  return lines
end

--- Commands, paths, diffs and URLs: every character kept, spacing too (it
--- can matter), cut into pieces of at most `width` display cells.
function M.cut(text, width)
  local lines = {}
  for _, line in ipairs(M.lines(text)) do
    if not line:find('[\128-\255]') then
      -- ASCII: one cell per byte (the common case, and fast for huge commands).
      table.insert(lines, line:sub(1, width))
      for from = width + 1, #line, width do
        table.insert(lines, line:sub(from, from + width - 1))
      end
    else
      local piece, cells = {}, 0
      for _, char in ipairs(vim.fn.split(line, '\\zs')) do
        local w = vim.api.nvim_strwidth(char)
        if cells + w > width and cells > 0 then
          table.insert(lines, table.concat(piece))
          piece, cells = {}, 0
        end
        table.insert(piece, char)
        cells = cells + w
      end
      table.insert(lines, table.concat(piece))
    end
  end
  return lines
end

--- `lines` with `prefix` before each.
function M.indent(lines, prefix)
  return vim.tbl_map(function(line)
    return prefix .. line
  end, lines)
end

--- The window's width; text fits in two cells less.
function M.width()
  return math.min(config.options.float.max_width, vim.o.columns - 4)
end

---@class ask-lsp.Window
---@field buf integer
---@field win integer
local Window = {}
Window.__index = Window

--- Opens a float on a new scratch buffer for `prompt`, focused unless the
--- prompt is to be shown unfocused (ask-lsp.attention). `on_wipe` runs when
--- the buffer goes, however the window was closed.
---@param prompt { unfocused?: boolean, win?: integer }
---@param on_wipe fun()
---@return ask-lsp.Window
function M.open(prompt, on_wipe)
  local self = setmetatable({}, Window)
  self.buf = vim.api.nvim_create_buf(false, true)
  vim.bo[self.buf].bufhidden = 'wipe'
  vim.bo[self.buf].filetype = 'ask-lsp'
  self.win = vim.api.nvim_open_win(self.buf, not prompt.unfocused, {
    relative = 'editor',
    width = M.width(),
    height = 3,
    row = 1,
    col = 1,
    style = 'minimal',
    border = config.options.float.border,
    title = ' ask-lsp ',
    title_pos = 'center',
  })
  prompt.win = self.win
  vim.wo[self.win].wrap = false
  vim.wo[self.win].cursorline = true
  vim.api.nvim_create_autocmd('BufWipeout', { buffer = self.buf, once = true, callback = on_wipe })
  return self
end

function Window:map(lhs, fn)
  vim.keymap.set('n', lhs, fn, { buffer = self.buf, nowait = true, silent = true })
end

function Window:valid()
  return vim.api.nvim_win_is_valid(self.win)
end

--- Shows `lines` and fits the window to them (scrolling when they are
--- taller than the screen allows), centred.
function Window:set(lines)
  vim.bo[self.buf].modifiable = true
  vim.api.nvim_buf_set_lines(self.buf, 0, -1, false, lines)
  vim.bo[self.buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(self.buf, M.ns, 0, -1)
  local height = math.min(#lines, math.max(3, vim.o.lines - 6))
  vim.api.nvim_win_set_config(self.win, {
    relative = 'editor',
    width = M.width(),
    height = height,
    row = math.floor((vim.o.lines - height) / 2) - 1,
    col = math.floor((vim.o.columns - M.width()) / 2),
  })
end

--- Highlights bytes [from, to) of line `row` (1-based); `to` nil: to its end.
function Window:mark(row, from, to, group)
  local line = vim.api.nvim_buf_get_lines(self.buf, row - 1, row, false)[1] or ''
  vim.api.nvim_buf_set_extmark(self.buf, M.ns, row - 1, from, { end_col = to or #line, hl_group = group })
end

function Window:cursor(row)
  if self:valid() then
    vim.api.nvim_win_set_cursor(self.win, { row, 0 })
  end
end

function Window:close()
  if self:valid() then
    vim.api.nvim_win_close(self.win, true)
  end
end

return M
