-- An edit permission as a diff of the real file: a new tab with the file
-- beside the version the agent proposes (the file with the edit's diff
-- applied), in Vim's diff mode. The keys are the permission float's (1-9,
-- o/a/r/R, m, q/<Esc>), on the proposed side. The whole edit is allowed or
-- rejected: the agent's protocol answers once / always / reject, so single
-- hunks cannot be chosen. When the diff does not apply to the file as it is
-- now, the float shows the diff instead.
-- The agent names the file, so the split opens by itself only for a file of
-- the project (the editor's working directory or ask-lsp's workspace),
-- resolved through links, regular and bounded (ask-lsp.files), and only
-- after the diff parses; both sides are scratch buffers filled from that one
-- bounded read, so Neovim never opens the path itself. Anything else is the
-- float with the diff alone and a line saying why the file was not opened.
local permission_ui = require('ask-lsp.ui.permission')
local files = require('ask-lsp.files')
local t = require('ask-lsp.i18n').t

local M = {}

--- The hunks of a unified diff: { old_start, old_count, lines = { ' x', '-y', '+z' } }.
--- A hunk takes as many lines as its header counts (an empty one is an
--- empty context line whose space was trimmed); what follows is not its.
local function hunks(diff)
  local list, current, old_left, new_left = {}, nil, 0, 0
  for _, line in ipairs(vim.split(diff, '\n', { plain = true })) do
    local old_start, old_count, new_count = line:match('^@@ %-(%d+),?(%d*) %+%d+,?(%d*) @@')
    if old_start then
      current = { old_start = tonumber(old_start), old_count = old_count == '' and 1 or tonumber(old_count), lines = {} }
      old_left, new_left = current.old_count, new_count == '' and 1 or tonumber(new_count)
      table.insert(list, current)
    elseif current and (old_left > 0 or new_left > 0) then
      local sign = line == '' and ' ' or line:sub(1, 1)
      if sign == '\\' then
        -- "\ No newline at end of file": nothing to apply.
      elseif sign == '+' and new_left > 0 then
        new_left = new_left - 1
        table.insert(current.lines, line)
      elseif sign == '-' and old_left > 0 then
        old_left = old_left - 1
        table.insert(current.lines, line)
      elseif sign == ' ' and old_left > 0 and new_left > 0 then
        old_left, new_left = old_left - 1, new_left - 1
        table.insert(current.lines, line == '' and ' ' or line)
      else
        return nil
      end
    end
  end
  return list
end

--- `old` with `diff` applied, or nil and why not: every context and removed
--- line must be where the hunk says.
---@param old string[]
---@param diff string
---@return string[]? new
---@return string? why
function M.apply(old, diff)
  local list = hunks(diff)
  if not list or #list == 0 then
    return nil, 'the diff is not a unified diff'
  end
  local new, next_old = {}, 1
  for _, hunk in ipairs(list) do
    -- A hunk that removes nothing (@@ -5,0 …) inserts after line 5.
    local start = hunk.old_count == 0 and hunk.old_start + 1 or hunk.old_start
    if start < next_old then
      return nil, 'its hunks overlap'
    end
    for i = next_old, start - 1 do
      if old[i] == nil then
        return nil, ('it starts past the end (line %d)'):format(start)
      end
      table.insert(new, old[i])
    end
    local at = start
    for _, line in ipairs(hunk.lines) do
      local sign, text = line:sub(1, 1), line:sub(2)
      if sign == '+' then
        table.insert(new, text)
      else
        if old[at] ~= text then
          return nil, ('line %d is not what the diff expects'):format(at)
        end
        if sign == ' ' then
          table.insert(new, text)
        end
        at = at + 1
      end
    end
    next_old = at
  end
  for i = next_old, #old do
    table.insert(new, old[i])
  end
  return new
end

--- The file the edit is to: an absolute path among the patterns (OpenCode
--- adds the edit's full path there), else the diff's `+++` path in the
--- request's directory.
local function target(params)
  local permission = params.permission
  for i = #permission.patterns, 1, -1 do
    local pattern = permission.patterns[i]
    if pattern:sub(1, 1) == '/' then
      return pattern
    end
  end
  local named = permission.diff:match('\n%+%+%+ ([^\t\n]+)') or permission.diff:match('^%+%+%+ ([^\t\n]+)')
  if not named or named == '/dev/null' then
    return nil
  end
  if named:sub(1, 1) == '/' then
    return named
  end
  local directory = params.source and params.source.directory
  return directory and vim.fs.joinpath(directory, (named:gsub('^b/', ''))) or nil
end

--- The project's folders: the editor's working directory and ask-lsp's
--- workspace. Not the request's directory: the agent's server names it.
local function project_roots()
  local roots = { vim.fn.getcwd() }
  local client = require('ask-lsp.client').get()
  for _, folder in ipairs(client and client.workspace_folders or {}) do
    table.insert(roots, vim.uri_to_fname(folder.uri))
  end
  return roots
end

--- Why a file of the project was not read, as the catalogue says it.
local NOT_READ = { not_file = 'diff.not_file', too_large = 'diff.too_large', unreadable = 'diff.unreadable' }

--- The file's lines as they are now, or nil and the note the float shows
--- instead: the loaded buffer (unsaved changes included) when the person
--- has it open, else a bounded read of the regular file; {} for a new file.
---@return string[]? lines
---@return string? note
local function current_lines(path)
  local resolved, root = files.locate(path, project_roots())
  if not root then
    return nil, t('diff.outside', { path = resolved == path and path or (path .. ' → ' .. resolved) })
  end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(buf)
    if (name == resolved or name == path) and vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == '' then
      return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    end
  end
  local lines, why = files.read_lines(resolved)
  if not lines then
    return nil, t(NOT_READ[why], { path = resolved })
  end
  return lines
end

--- Opens the diff split for an edit permission; false (nothing opened) when
--- there is no file to show it against or the diff does not apply. When the
--- file is not shown for what it is (outside the project, not a regular
--- file, too large), prompt.file_note says so for the float.
---@return boolean
function M.show(prompt)
  local params = prompt.params
  local path = target(params)
  local list = hunks(params.permission.diff)
  if not path or not list or #list == 0 then
    return false
  end
  path = vim.fs.normalize(path)
  if path:sub(1, 1) ~= '/' then
    return false
  end
  local lines, note = current_lines(path)
  if not lines then
    prompt.file_note = note
    return false
  end
  local proposed = M.apply(lines, params.permission.diff)
  if not proposed then
    return false
  end
  local previous_tab = vim.api.nvim_get_current_tabpage()
  vim.cmd.tabnew()
  local tab = vim.api.nvim_get_current_tabpage()
  local file_win, file_buf = vim.api.nvim_get_current_win(), vim.api.nvim_get_current_buf()
  vim.bo[file_buf].buftype = 'nofile'
  vim.bo[file_buf].bufhidden = 'wipe'
  vim.bo[file_buf].swapfile = false
  pcall(vim.api.nvim_buf_set_name, file_buf, 'ask-lsp://now/' .. path)
  vim.api.nvim_buf_set_lines(file_buf, 0, -1, false, lines)
  vim.bo[file_buf].modifiable = false
  -- From the name and the lines already read: never from the file again.
  vim.bo[file_buf].filetype = vim.filetype.match({ filename = path, contents = lines }) or ''
  vim.cmd.diffthis()
  vim.cmd('rightbelow vnew')
  local win, buf = vim.api.nvim_get_current_win(), vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  pcall(vim.api.nvim_buf_set_name, buf, 'ask-lsp://proposed/' .. path)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, proposed)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = vim.bo[file_buf].filetype
  vim.cmd.diffthis()
  local keys = table.concat(permission_ui.choice_labels(params.permission), '  ')
  vim.wo[win].winbar = t('diff.proposed', { asker = permission_ui.asker(params), keys = keys }):gsub('%%', '%%%%')
  vim.wo[file_win].winbar = t('diff.now', { path = path }):gsub('%%', '%%%%')
  prompt.win = win

  local closed = false
  local function close()
    if closed then
      return
    end
    closed = true
    if vim.api.nvim_win_is_valid(file_win) then
      vim.api.nvim_win_call(file_win, function()
        vim.cmd.diffoff()
      end)
      vim.wo[file_win].winbar = ''
    end
    if vim.api.nvim_tabpage_is_valid(tab) then
      if #vim.api.nvim_list_tabpages() > 1 then
        vim.cmd.tabclose(vim.api.nvim_tabpage_get_number(tab))
      end
    end
    if vim.api.nvim_buf_is_valid(buf) then
      vim.api.nvim_buf_delete(buf, { force = true })
    end
    if vim.api.nvim_buf_is_valid(file_buf) then
      vim.api.nvim_buf_delete(file_buf, { force = true })
    end
    if vim.api.nvim_tabpage_is_valid(previous_tab) then
      vim.api.nvim_set_current_tabpage(previous_tab)
    end
  end
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      -- Closed some other way (:q, :tabclose): it stays pending, never allowed.
      prompt.respond({ outcome = 'deferred' })
      vim.schedule(close)
    end,
  })
  prompt.close = close
  permission_ui.bind(function(lhs, fn)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, silent = true })
  end, params.permission, function(result)
    prompt.respond(result)
    close()
  end)
  return true
end

return M
