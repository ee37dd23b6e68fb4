-- Single-select questions through vim.ui.select, so the person's picker
-- (telescope, fzf-lua, snacks, …) shows them. vim.ui.select cannot be closed
-- from code: when a question is answered elsewhere, a late choice is ignored.
local ui = require('ask-lsp.ui')
local asker = require('ask-lsp.ui.permission').asker
local t = require('ask-lsp.i18n').t

local M = {}

local OTHER, REJECT = { other = true }, { reject = true }

function M.show(prompt)
  local questions = prompt.params.questions
  local answers = {}
  --- Left pending: say how to come back to it, or it is easily lost.
  local function later()
    -- A picker closed after the prompt was resolved elsewhere says nothing.
    if require('ask-lsp.client').current ~= prompt then
      return
    end
    prompt.respond({ outcome = 'deferred' })
    vim.notify('ask-lsp: ' .. t('question.still_pending', { title = ui.request_title(prompt.params) }))
  end
  local function ask(index)
    if index > #questions then
      prompt.respond({ outcome = 'answered', answers = answers })
      return
    end
    local question = questions[index]
    -- Reject first: a picker that starts on the first item never answers
    -- for the person on one Enter.
    local items = vim.list_extend({ REJECT }, question.options)
    if question.custom then
      table.insert(items, OTHER)
    end
    vim.ui.select(items, {
      prompt = ui.title(question, index, #questions) .. ' — ' .. asker(prompt.params),
      kind = 'ask-lsp',
      format_item = function(item)
        if item == OTHER then
          return t('question.other')
        elseif item == REJECT then
          return t('question.reject')
        end
        return ui.describe(item)
      end,
    }, function(choice)
      if choice == nil then
        later()
      elseif choice == REJECT then
        prompt.respond({ outcome = 'rejected' })
      elseif choice == OTHER then
        local function typed(text)
          text = text and (question.secret and text or vim.trim(text)) or ''
          if text == '' then
            later()
          else
            answers[index] = { text }
            ask(index + 1)
          end
        end
        if question.secret then
          -- Typed masked, kept in no history.
          local ok, text = pcall(vim.fn.inputsecret, question.question .. ' ')
          typed(ok and text or nil)
        else
          vim.ui.input({ prompt = question.question .. ' ' }, typed)
        end
      else
        answers[index] = { choice.label }
        ask(index + 1)
      end
    end)
  end
  ask(1)
end

return M
