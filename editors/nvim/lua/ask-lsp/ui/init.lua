-- Chooses how a prompt is shown: permissions and forms in their own
-- floats; questions through vim.ui.select or the question form.
local config = require('ask-lsp.config')
local t = require('ask-lsp.i18n').t

local M = {}

local function all_single(params)
  for _, q in ipairs(params.questions) do
    if q.multiple then
      return false
    end
  end
  return true
end

function M.show(prompt)
  local ui = config.options.ui
  local params = prompt.params
  if params.kind == 'permission' then
    -- An edit: the file beside the proposed version when the diff applies
    -- to it (a tab cannot open without the cursor: the float when unfocused).
    -- Whatever the split meets, the prompt is shown (the float at least).
    local split = params.permission.diff and config.options.diff == 'split' and not prompt.unfocused
    local shown = false
    if split then
      local ok, opened = pcall(require('ask-lsp.ui.diff').show, prompt)
      shown = ok and opened
    end
    if not shown then
      require('ask-lsp.ui.permission').show(prompt)
    end
  elseif params.kind == 'form' then
    require('ask-lsp.ui.form').show(prompt)
  elseif prompt.unfocused then
    -- vim.ui.select always takes the cursor; the float can leave it.
    require('ask-lsp.ui.float').show(prompt)
  elseif (ui == 'auto' and #params.questions == 1 and all_single(params)) or (ui == 'select' and all_single(params)) then
    require('ask-lsp.ui.select').show(prompt)
  else
    require('ask-lsp.ui.float').show(prompt)
  end
end

--- "label — description", on one line.
function M.describe(option)
  if option.description and option.description ~= '' then
    return option.label .. ' — ' .. option.description
  end
  return option.label
end

--- A request's display title. Version 2 servers send it; for version 1,
--- the same rule: the first question's header, else its text, cut to 80
--- characters, and " (+N more)" when there are several.
---@param params ask-lsp.AskParams
function M.request_title(params)
  if params.title then
    return params.title
  end
  local first = params.questions[1]
  local name = first.header ~= '' and first.header or first.question
  if vim.fn.strchars(name) > 80 then
    name = vim.fn.strcharpart(name, 0, 79) .. '…'
  end
  if #params.questions > 1 then
    return t('title.more', { title = name, count = #params.questions - 1 })
  end
  return name
end

--- The prompt title for one question: "[header] question".
function M.title(question, index, total)
  local parts = {}
  if total > 1 then
    table.insert(parts, ('(%d/%d)'):format(index, total))
  end
  if question.header and question.header ~= '' then
    table.insert(parts, '[' .. question.header .. ']')
  end
  table.insert(parts, question.question)
  return table.concat(parts, ' ')
end

return M
