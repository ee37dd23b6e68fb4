-- The build step: installs ask-lsp as <plugin>/bin/ask-lsp, which the
-- plugin uses when `cmd` is not set. When the repository this plugin lives
-- in (it is editors/nvim there) is checked out at a release tag, the
-- release archive for that tag and this platform is downloaded and checked
-- against the SHA-256 the repository itself lists for it
-- (editors/nvim/checksums/<tag>.sha256: never a checksum from the archive's
-- host, which a swapped archive would bring along), its entries listed
-- before unpacking (only plain files and folders under its one folder: no
-- link, no path leaving it); otherwise, or when any of that fails, it
-- builds ask-lsp alone (`-p ask-lsp`: not the workspace's simulator) with
-- cargo.
-- lazy.nvim runs it through build.lua; :AskLsp build runs it again.
-- Loaded with dofile() by build.lua, before the plugin is on 'runtimepath',
-- so it requires nothing of the plugin's own (the catalogue by path, unless
-- the plugin has loaded it: then its `locale` setting applies).
local M = {}

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local t = (package.loaded['ask-lsp.i18n'] or dofile(here .. '/i18n/init.lua')).t
local plugin_dir = vim.fn.fnamemodify(here, ':h:h')
local exe = vim.fn.has('win32') == 1 and '.exe' or ''
M.binary = plugin_dir .. '/bin/ask-lsp' .. exe

--- The repository around the plugin: two levels up, with ask-lsp's Cargo.toml.
local function repository()
  local root = vim.fn.fnamemodify(plugin_dir, ':h:h')
  local manifest = io.open(root .. '/Cargo.toml', 'r')
  local text = manifest and manifest:read('*a') or ''
  if manifest then
    manifest:close()
  end
  if not text:find('name%s*=%s*"ask%-lsp"') then
    return nil, t('build.no_repository', { root = root })
  end
  return root
end

--- Runs `cmd` in `cwd`; `on_done(err, stdout)` on the main loop. The error
--- keeps the end of stderr, where cargo says what went wrong.
--- What the build says on the way (lazy.nvim shows it in its build log).
function M.log(message)
  vim.notify(message, vim.log.levels.WARN)
end

local function run(cmd, cwd, on_done)
  local ok, spawned = pcall(vim.system, cmd, { cwd = cwd, text = true }, function(out)
    vim.schedule(function()
      if out.code == 0 then
        on_done(nil, out.stdout)
      else
        local tail = vim.list_slice(vim.split(vim.trim(out.stderr or ''), '\n'), -15)
        on_done(t('build.failed', { cmd = table.concat(cmd, ' '), code = out.code, stderr = table.concat(tail, '\n') }))
      end
    end)
  end)
  if not ok then
    on_done(t('build.cannot_run', { cmd = cmd[1], error = spawned }))
  end
end

--- Copies the built binary next to the plugin (through a temporary name, so
--- a running ask-lsp is never overwritten in place).
local function install(built)
  vim.fn.mkdir(vim.fn.fnamemodify(M.binary, ':h'), 'p')
  local tmp = M.binary .. '.new'
  local ok, err = vim.uv.fs_copyfile(built, tmp)
  if not ok then
    return t('build.cannot_copy', { path = built, error = err })
  end
  vim.uv.fs_chmod(tmp, tonumber('755', 8))
  ok, err = vim.uv.fs_rename(tmp, M.binary)
  if not ok then
    return t('build.cannot_install', { path = M.binary, error = err })
  end
end

--- The release target (cargo-dist's archive names) of this machine, and
--- its archive's extension; nil for a platform without releases.
local function release_target()
  local uname = vim.uv.os_uname()
  local arch = ({ x86_64 = 'x86_64', amd64 = 'x86_64', AMD64 = 'x86_64', aarch64 = 'aarch64', arm64 = 'aarch64', ARM64 = 'aarch64' })[uname.machine]
  if not arch then
    return nil
  end
  if uname.sysname == 'Linux' then
    return arch .. '-unknown-linux-gnu', '.tar.gz'
  elseif uname.sysname == 'Darwin' then
    return arch .. '-apple-darwin', '.tar.gz'
  elseif uname.sysname:find('Windows') and arch == 'x86_64' then
    return 'x86_64-pc-windows-msvc', '.zip'
  end
end

--- Where release archives are: $ASK_LSP_RELEASE_URL, else the GitHub
--- releases of the repository's `origin` remote; nil when neither.
local function release_base(root)
  local configured = os.getenv('ASK_LSP_RELEASE_URL')
  if configured and configured ~= '' then
    return (configured:gsub('/+$', ''))
  end
  local out = vim.system({ 'git', 'remote', 'get-url', 'origin' }, { cwd = root, text = true }):wait()
  local repo = out.code == 0 and vim.trim(out.stdout):match('github%.com[:/]([^/]+/[^/]+)$')
  return repo and ('https://github.com/%s/releases/download'):format((repo:gsub('%.git$', ''))) or nil
end

--- The SHA-256 of a file, in hex, by whichever tool this system has.
local function sha256(path)
  for _, cmd in ipairs({ { 'sha256sum', path }, { 'shasum', '-a', '256', path }, { 'certutil', '-hashfile', path, 'SHA256' } }) do
    if vim.fn.executable(cmd[1]) == 1 then
      local out = vim.system(cmd, { text = true }):wait()
      local hex = out.code == 0 and out.stdout:match('%f[%x](%x+)%f[%X]')
      if hex and #hex == 64 then
        return hex:lower()
      end
    end
  end
end

--- The SHA-256 the repository lists for `name` at `tag`: the file in the
--- working tree, else the newest of the clone's own branches (a release's
--- checksums are committed after its tag, so a checkout of the tag finds
--- them on the branch it came from). nil when no list names it.
local function listed_checksum(root, tag, name)
  local relative = 'editors/nvim/checksums/' .. tag .. '.sha256'
  local texts = {}
  local file = io.open(root .. '/' .. relative, 'r')
  if file then
    table.insert(texts, file:read('*a'))
    file:close()
  end
  local refs = vim.system({ 'git', 'for-each-ref', '--sort=-committerdate', '--format=%(refname)', 'refs/heads', 'refs/remotes' },
    { cwd = root, text = true }):wait()
  for _, ref in ipairs(refs.code == 0 and vim.split(vim.trim(refs.stdout), '\n', { trimempty = true }) or {}) do
    local out = vim.system({ 'git', 'show', ref .. ':' .. relative }, { cwd = root, text = true }):wait()
    if out.code == 0 then
      table.insert(texts, out.stdout)
    end
  end
  for _, text in ipairs(texts) do
    for line in text:gmatch('[^\n]+') do
      local hex, listed = line:match('^(%x+)%s+%*?(%S+)%s*$')
      if hex and #hex == 64 and listed == name then
        return hex:lower()
      end
    end
  end
end

--- Nil when every entry of the archive is a plain file or folder under
--- `folder`/, else why not: listed before anything is unpacked.
local function check_entries(archive, folder)
  local names = vim.system({ 'tar', '-tf', archive }, { text = true }):wait()
  local long = vim.system({ 'tar', '-tvf', archive }, { text = true }):wait()
  if names.code ~= 0 or long.code ~= 0 then
    return vim.trim((names.stderr or '') .. (long.stderr or ''))
  end
  local list = vim.split(names.stdout, '\n', { trimempty = true })
  local kinds = vim.split(long.stdout, '\n', { trimempty = true })
  if #list ~= #kinds then
    return t('build.entries_unclear')
  end
  for i, entry in ipairs(list) do
    local kind = kinds[i]:sub(1, 1)
    if kind ~= '-' and kind ~= 'd' then
      return t('build.entry_link', { entry = entry })
    end
    local inside = entry == folder or entry == folder .. '/' or entry:sub(1, #folder + 1) == folder .. '/'
    for part in entry:gmatch('[^/\\]+') do
      inside = inside and part ~= '..' and part ~= '.'
    end
    if not inside then
      return t('build.entry_outside', { entry = entry, folder = folder })
    end
  end
end

--- Downloads the release archive of `tag` for this platform, checks it
--- against the checksum the repository lists and its entries, and installs
--- the binary in it. Returns nil when it is installed, else why not (the
--- caller then builds with cargo).
local function download(root, tag)
  local target, ext = release_target()
  local base = release_base(root)
  if not target or not base then
    return not target and t('build.no_platform') or t('build.no_release_url')
  end
  if vim.fn.executable('curl') == 0 or vim.fn.executable('tar') == 0 then
    return t('build.need_curl')
  end
  local name = ('ask-lsp-%s%s'):format(target, ext)
  local expected = listed_checksum(root, tag, name)
  if not expected then
    return t('build.not_listed', { name = name, tag = tag })
  end
  local url = ('%s/%s/%s'):format(base, tag, name)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  local archive = dir .. '/' .. name
  local why = (function()
    local out = vim.system({ 'curl', '-fsSL', '--max-time', '300', '-o', archive, url }, { text = true }):wait()
    if out.code ~= 0 then
      return t('build.cannot_download', { url = url, error = vim.trim(out.stderr or '') })
    end
    local actual = sha256(archive)
    if not actual then
      return t('build.no_sha256')
    end
    if expected ~= actual then
      return t('build.checksum', { name = name, actual = actual, expected = expected })
    end
    local folder = 'ask-lsp-' .. target
    local bad = check_entries(archive, folder)
    if bad then
      return t('build.cannot_unpack', { name = name, error = bad })
    end
    out = vim.system({ 'tar', '-xf', archive, '-C', dir }, { text = true }):wait()
    if out.code ~= 0 then
      return t('build.cannot_unpack', { name = name, error = vim.trim(out.stderr or '') })
    end
    local binary = ('%s/%s/ask-lsp%s'):format(dir, folder, exe)
    local stat = vim.uv.fs_lstat(binary)
    if not stat or stat.type ~= 'file' then
      return t('build.cannot_unpack', { name = name, error = t('build.entry_link', { entry = folder .. '/ask-lsp' .. exe }) })
    end
    return install(binary)
  end)()
  vim.fn.delete(dir, 'rf')
  return why
end

--- The release tag the repository is checked out at (lazy.nvim checks out
--- a plugin's tag with `version = '*'`), else nil.
local function release_tag(root)
  local out = vim.system({ 'git', 'describe', '--tags', '--exact-match', 'HEAD' }, { cwd = root, text = true }):wait()
  local tag = out.code == 0 and vim.trim(out.stdout) or ''
  return tag:match('^v%d') and tag or nil
end

--- Installs the binary (downloaded for a release tag, else built);
--- `on_done(err, version)` runs once, on the main loop, when everything has
--- finished or something failed.
---@param on_done fun(err: string?, version: string?)
function M.build(on_done)
  local finished = false
  local function finish(err, version)
    if not finished then
      finished = true
      on_done(err, version)
    end
  end
  -- A step that raises ends the build with its error instead of leaving it
  -- unfinished.
  local function step(fn)
    return function(...)
      local ok, err = pcall(fn, ...)
      if not ok then
        finish(tostring(err))
      end
    end
  end
  local root, err = repository()
  if not root then
    return finish(err)
  end
  local tag = release_tag(root)
  if tag then
    local why = download(root, tag)
    if not why then
      return run({ M.binary, '--version' }, root, step(function(verr, version)
        finish(verr, version and vim.trim(version))
      end))
    end
    M.log('ask-lsp: ' .. t('build.release_skipped', { tag = tag, why = why }))
  end
  if vim.fn.executable('cargo') == 0 then
    return finish(t('build.no_cargo'))
  end
  -- Where cargo puts the binary honours CARGO_TARGET_DIR and .cargo/config.
  run({ 'cargo', 'metadata', '--format-version', '1', '--no-deps' }, root, step(function(merr, metadata)
    if merr then
      return finish(merr)
    end
    local target = vim.json.decode(metadata).target_directory
    run({ 'cargo', 'build', '--release', '--locked', '-p', 'ask-lsp' }, root, step(function(berr)
      if berr then
        return finish(berr)
      end
      local ierr = install(target .. '/release/ask-lsp' .. exe)
      if ierr then
        return finish(ierr)
      end
      run({ M.binary, '--version' }, root, step(function(verr, version)
        finish(verr, version and vim.trim(version))
      end))
    end))
  end))
end

--- For lazy.nvim's build step: builds, waiting while Neovim keeps drawing,
--- and raises the error (lazy shows it) when the build fails.
function M.run()
  local done, failure, built
  M.build(function(err, version)
    failure, built, done = err, version, true
  end)
  -- cargo's first build takes minutes; vim.wait keeps the UI responsive.
  vim.wait(30 * 60 * 1000, function()
    return done
  end, 100)
  if not done then
    error('ask-lsp: ' .. t('build.timeout'))
  end
  if failure then
    error('ask-lsp: ' .. failure)
  end
  print('ask-lsp: ' .. t('build.built', { version = built, path = M.binary }))
  return built
end

return M
