//! editors/mason/package.yaml, the entry ready for mason-registry: it parses
//! as YAML and names the release archives editors/nvim's build step
//! downloads (and cargo-dist makes), with the binary where they hold it.

use std::collections::BTreeSet;
use std::path::Path;

use yaml_rust2::YamlLoader;

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).expect(path)
}

/// The archive names build.lua can ask for: `ask-lsp-<target><ext>` for each
/// `return …` of its `release_target`, with `arch` one of its architectures.
fn build_lua_archives() -> BTreeSet<String> {
    let lua = read("editors/nvim/lua/ask-lsp/build.lua");
    let body = lua
        .split("local function release_target()")
        .nth(1)
        .and_then(|rest| rest.split("\nend\n").next())
        .expect("build.lua has release_target");
    let arches: BTreeSet<&str> = ["x86_64", "aarch64"]
        .into_iter()
        .filter(|arch| body.contains(&format!("= '{arch}'")))
        .collect();
    assert_eq!(arches.len(), 2, "build.lua's architectures changed: {body}");
    let mut names = BTreeSet::new();
    for line in body.lines().map(str::trim) {
        let Some(returned) = line.strip_prefix("return ") else {
            continue;
        };
        if returned == "nil" {
            continue;
        }
        let quoted: Vec<&str> = returned.split('\'').skip(1).step_by(2).collect();
        let [target, ext] = quoted[..] else {
            panic!("unexpected return in release_target: {line}");
        };
        if returned.starts_with("arch ..") {
            names.extend(
                arches
                    .iter()
                    .map(|arch| format!("ask-lsp-{arch}{target}{ext}")),
            );
        } else {
            names.insert(format!("ask-lsp-{target}{ext}"));
        }
    }
    names
}

#[test]
fn the_mason_package_names_the_archives_the_build_step_downloads() {
    let docs = YamlLoader::load_from_str(&read("editors/mason/package.yaml")).expect("valid YAML");
    let package = &docs[0];
    assert_eq!(package["name"].as_str(), Some("ask-lsp"));
    assert!(
        package["source"]["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("pkg:github/")),
        "source.id is a GitHub purl"
    );
    assert_eq!(
        package["bin"]["ask-lsp"].as_str(),
        Some("{{source.asset.bin}}")
    );

    let assets = package["source"]["asset"]
        .as_vec()
        .expect("source.asset list");
    let mut files = BTreeSet::new();
    for asset in assets {
        let file = asset["file"].as_str().expect("asset.file");
        let bin = asset["bin"].as_str().expect("asset.bin");
        assert!(asset["target"].as_str().is_some(), "asset.target: {file}");
        // cargo-dist's layout: ask-lsp-<target>/ask-lsp inside the archive.
        let stem = file
            .strip_suffix(".tar.gz")
            .or_else(|| file.strip_suffix(".zip"))
            .expect("a .tar.gz or .zip archive");
        let exe = if file.ends_with(".zip") { ".exe" } else { "" };
        assert_eq!(bin, format!("{stem}/ask-lsp{exe}"));
        files.insert(file.to_owned());
    }
    assert_eq!(files, build_lua_archives());
}
