-- The build step: builds ask-lsp with cargo from the repository this plugin
-- lives in (it is editors/nvim there) and installs the binary as
-- <plugin>/bin/ask-lsp, which the plugin uses when `cmd` is not set.
-- lazy.nvim runs it through build.lua; :AskLsp build runs it again.
-- Loaded with dofile() by build.lua, before the plugin is on 'runtimepath',
-- so it requires nothing of the plugin's own.
local M = {}

local plugin_dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h')
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
    return nil, ('no ask-lsp repository around the plugin (%s/Cargo.toml): install the binary with '
      .. '`cargo install --locked --path .` in a clone of ask-lsp, or set cmd in setup{}'):format(root)
  end
  return root
end

--- Runs `cmd` in `cwd`; `on_done(err, stdout)` on the main loop. The error
--- keeps the end of stderr, where cargo says what went wrong.
local function run(cmd, cwd, on_done)
  local ok, spawned = pcall(vim.system, cmd, { cwd = cwd, text = true }, function(out)
    vim.schedule(function()
      if out.code == 0 then
        on_done(nil, out.stdout)
      else
        local tail = vim.list_slice(vim.split(vim.trim(out.stderr or ''), '\n'), -15)
        on_done(('`%s` failed (exit %d):\n%s'):format(table.concat(cmd, ' '), out.code, table.concat(tail, '\n')))
      end
    end)
  end)
  if not ok then
    on_done(('cannot run %s: %s'):format(cmd[1], spawned))
  end
end

--- Copies the built binary next to the plugin (through a temporary name, so
--- a running ask-lsp is never overwritten in place).
local function install(built)
  vim.fn.mkdir(vim.fn.fnamemodify(M.binary, ':h'), 'p')
  local tmp = M.binary .. '.new'
  local ok, err = vim.uv.fs_copyfile(built, tmp)
  if not ok then
    return ('cannot copy %s: %s'):format(built, err)
  end
  vim.uv.fs_chmod(tmp, tonumber('755', 8))
  ok, err = vim.uv.fs_rename(tmp, M.binary)
  if not ok then
    return ('cannot install %s: %s'):format(M.binary, err)
  end
end

--- Builds and installs the binary; `on_done(err, version)` runs once, on
--- the main loop, when everything has finished or something failed.
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
  if vim.fn.executable('cargo') == 0 then
    return finish('cargo not found: install Rust (https://rustup.rs) and run :AskLsp build, or set cmd in setup{}')
  end
  -- Where cargo puts the binary honours CARGO_TARGET_DIR and .cargo/config.
  run({ 'cargo', 'metadata', '--format-version', '1', '--no-deps' }, root, step(function(merr, metadata)
    if merr then
      return finish(merr)
    end
    local target = vim.json.decode(metadata).target_directory
    run({ 'cargo', 'build', '--release', '--locked' }, root, step(function(berr)
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
    error('ask-lsp: the build did not finish in 30 minutes')
  end
  if failure then
    error('ask-lsp: ' .. failure)
  end
  print(('ask-lsp: built %s at %s'):format(built, M.binary))
  return built
end

return M
