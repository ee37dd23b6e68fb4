-- Single-select questions through vim.ui.select, so the person's picker
-- (telescope, fzf-lua, snacks, …) shows them. vim.ui.select cannot be closed
-- from code: when a question is answered elsewhere, a late choice is ignored.
local ui = require('ask-lsp.ui')

local M = {}

local OTHER, REJECT = { other = true }, { reject = true }

function M.show(prompt)
  local questions = prompt.params.questions
  local answers = {}
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
      prompt = ui.title(question, index, #questions),
      kind = 'ask-lsp',
      format_item = function(item)
        if item == OTHER then
          return 'Other… (type an answer)'
        elseif item == REJECT then
          return 'Reject the question'
        end
        return ui.describe(item)
      end,
    }, function(choice)
      if choice == nil then
        prompt.respond({ outcome = 'deferred' })
      elseif choice == REJECT then
        prompt.respond({ outcome = 'rejected' })
      elseif choice == OTHER then
        vim.ui.input({ prompt = question.question .. ' ' }, function(text)
          text = text and vim.trim(text) or ''
          if text == '' then
            prompt.respond({ outcome = 'deferred' })
          else
            answers[index] = { text }
            ask(index + 1)
          end
        end)
      else
        answers[index] = { choice.label }
        ask(index + 1)
      end
    end)
  end
  ask(1)
end

return M
