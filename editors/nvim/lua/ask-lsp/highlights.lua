-- The form's highlight groups, linked by default so colorschemes and users
-- can set their own (a later :highlight wins over `default = true`).
local M = {}

M.links = {
  AskLspTitle = 'Title', -- the form's first line: "Question 1/2 · Header"
  AskLspOption = 'Normal', -- an option's label
  AskLspSelected = 'Special', -- a picked option
  AskLspDescription = 'Comment', -- an option's description
  AskLspHelp = 'NonText', -- the key help at the bottom
  AskLspAdded = 'Added', -- a permission's diff: added lines
  AskLspRemoved = 'Removed', -- a permission's diff: removed lines
  AskLspDomain = 'WarningMsg', -- a link's domain, to check before opening it
  AskLspError = 'DiagnosticError', -- why a form value is not accepted
}

function M.setup()
  for group, link in pairs(M.links) do
    vim.api.nvim_set_hl(0, group, { link = link, default = true })
  end
end

return M
