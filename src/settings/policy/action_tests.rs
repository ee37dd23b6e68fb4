//! Action names as agents spell them (a child of the policy tests, for
//! their helpers).

use super::*;

/// Claude Code and Codex send `Bash`, `Edit`: a rule written as the docs
/// spell actions names them; a look-alike letter does not.
#[test]
fn action_names_ignore_ascii_case_only() {
    let with_action = |action: &str| {
        let mut asked = bash("git status", &["git status"]);
        if let Kind::Permission(permission) = &mut asked.kind {
            permission.action = action.into();
        }
        asked
    };
    for action in ["Bash", "BASH", "Shell"] {
        assert!(
            matches!(
                decide(rules(), &with_action(action)),
                Decision::Allow { .. }
            ),
            "{action}"
        );
    }
    // U+0412 (Cyrillic В) is not B.
    assert!(!matches!(
        decide(rules(), &with_action("\u{412}ash")),
        Decision::Allow { .. }
    ));
    let edit_rule = json!({"permissions": [{"action": "Edit", "decision": "allow"}]});
    assert!(!matches!(
        decide(edit_rule, &with_action("Bash")),
        Decision::Allow { .. }
    ));
}
