-- The one door through which the plugin reads a file an agent names (an
-- edit permission's target): the agent chooses the path, so the path alone
-- never decides. A file is read only when, resolved through every link, it
-- lies inside one of the given roots (the editor's workspace, the request's
-- directory), is a regular file (never a device, FIFO or socket: /dev/zero
-- would fill memory, a FIFO would block Neovim for good) and is at most
-- MAX_BYTES long. The type is checked again on the open descriptor, so a
-- file swapped for a FIFO after the check is still not read.
local M = {}

--- Larger files are not shown beside their edit (the diff alone is).
M.MAX_BYTES = 4 * 1024 * 1024

local uv = vim.uv

--- `path` with every link resolved; for a file that does not exist yet
--- (the edit creates it, maybe in new folders), its nearest existing folder
--- resolved and the rest appended (a rest with `.` or `..` is not trusted).
---@return string?
local function resolve(path)
  local real = uv.fs_realpath(path)
  if real then
    return real
  end
  local rest, folder = {}, path
  while not uv.fs_lstat(folder) do
    local name = vim.fs.basename(folder)
    if name == '' or name == '.' or name == '..' then
      return nil
    end
    table.insert(rest, 1, name)
    folder = vim.fs.dirname(folder)
  end
  local base = uv.fs_realpath(folder)
  if not base or #rest == 0 or (uv.fs_stat(base) or {}).type ~= 'directory' then
    return nil
  end
  return vim.fs.joinpath(base, unpack(rest))
end

--- Is `path` (resolved) `root` (resolved) or inside it?
local function inside(path, root)
  if root == '/' then
    return true
  end
  return path == root or path:sub(1, #root + 1) == root .. '/'
end

--- Where `path` is, resolved, against `roots` (tried in order; nil roots and
--- roots that do not exist are skipped).
---@param path string an absolute path
---@param roots (string?)[]
---@return string resolved the path resolved through links (or as given when it cannot be)
---@return integer? root the index of the first root holding it, nil when outside all
function M.locate(path, roots)
  local resolved = resolve(path)
  if not resolved then
    return path, nil
  end
  for i = 1, table.maxn(roots) do
    local root = roots[i] and uv.fs_realpath(roots[i])
    if root and inside(resolved, root) then
      return resolved, i
    end
  end
  return resolved, nil
end

--- The lines of `resolved` (a path M.locate returned inside a root): {} for
--- a file that does not exist yet; nil and why ('not_file', 'too_large',
--- 'unreadable') when it is not a regular file of at most MAX_BYTES.
---@param resolved string
---@return string[]? lines
---@return ('not_file'|'too_large'|'unreadable')? why
function M.read_lines(resolved)
  local before = uv.fs_lstat(resolved)
  if not before then
    return {}
  end
  if before.type ~= 'file' then
    return nil, 'not_file'
  end
  if before.size > M.MAX_BYTES then
    return nil, 'too_large'
  end
  local c = uv.constants
  -- Non-blocking, never the controlling terminal: if a FIFO or a tty was
  -- put there since the stat, opening it does not wait.
  local fd = uv.fs_open(resolved, (c.O_RDONLY or 0) + (c.O_NONBLOCK or 0) + (c.O_NOCTTY or 0), 0)
  if not fd then
    return nil, 'unreadable'
  end
  local stat = uv.fs_fstat(fd)
  if not stat or stat.type ~= 'file' or stat.ino ~= before.ino or stat.dev ~= before.dev then
    uv.fs_close(fd)
    return nil, 'not_file'
  end
  if stat.size > M.MAX_BYTES then
    uv.fs_close(fd)
    return nil, 'too_large'
  end
  -- Bounded even if the file grows while it is read.
  local data = uv.fs_read(fd, M.MAX_BYTES + 1, 0)
  uv.fs_close(fd)
  if not data then
    return nil, 'unreadable'
  end
  if #data > M.MAX_BYTES then
    return nil, 'too_large'
  end
  -- As readfile() splits it: one entry per line, no trailing empty line.
  local lines = vim.split(data, '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  for i, line in ipairs(lines) do
    lines[i] = line:gsub('\r$', '')
  end
  return lines
end

return M
