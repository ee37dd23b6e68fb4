//! Forms a hook brought (Claude Code's MCP forms): the person fills them, a
//! policy never does (a child of the policy tests, for their helpers).

use super::*;

#[test]
fn a_form_from_a_hook_is_never_filled_by_a_policy_only_declined() {
    let mut from_hook = form_prompt(vec![form_field("c", "C", true, colors())], false);
    from_hook.origin.requester = Some(Box::default());
    for policy in [
        json!({"mode": "accept-first"}),
        json!({"mode": "auto", "rules": [{"match": "C", "answers": ["red"]}]}),
        json!({"mode": "forward"}),
    ] {
        assert!(
            matches!(decide(policy.clone(), &from_hook), Decision::Forward { .. }),
            "{policy}"
        );
    }
    assert!(matches!(
        decide(json!({"mode": "reject"}), &from_hook),
        Decision::Reject { .. }
    ));
    // The same form from an agent server: accept-first fills it.
    from_hook.origin.requester = None;
    assert!(matches!(
        decide(json!({"mode": "accept-first"}), &from_hook),
        Decision::Fill { .. }
    ));
}
