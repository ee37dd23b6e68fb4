use super::*;
use crate::prompt::Choice;

fn question(multiple: bool, custom: bool) -> Question {
    Question {
        header: "H".into(),
        text: "Which?".into(),
        options: ["Red", "Blue", "Green"]
            .iter()
            .map(|l| Choice::new(l.to_string(), String::new()))
            .collect(),
        multiple,
        custom,
        secret: false,
        cannot_show: None,
    }
}

#[test]
fn numbers_text_and_empty_lines() {
    let single = question(false, true);
    assert_eq!(
        parse_line(&single, " 2 "),
        Ok(Typed::Answer(vec!["Blue".into()]))
    );
    assert_eq!(parse_line(&single, ""), Ok(Typed::Reject));
    assert_eq!(
        parse_line(&single, "Purple please"),
        Ok(Typed::Answer(vec!["Purple please".into()]))
    );
    assert_eq!(
        parse_line(&single, "1,2"),
        Err("pick one number from 1 to 3 (=text answers with text)".into())
    );
    let multi = question(true, false);
    assert_eq!(
        parse_line(&multi, "1, 3"),
        Ok(Typed::Answer(vec!["Red".into(), "Green".into()]))
    );
    assert_eq!(
        parse_line(&multi, "4"),
        Err("pick numbers from 1 to 3, separated by commas or spaces".into())
    );
    assert_eq!(
        parse_line(&multi, "1 3"),
        Ok(Typed::Answer(vec!["Red".into(), "Green".into()]))
    );
    assert_eq!(
        parse_line(&multi, ","),
        Err("pick numbers from 1 to 3, separated by commas or spaces".into())
    );
    assert_eq!(
        parse_line(&question(false, false), "x"),
        Err("this question takes no typed answer: pick a number from 1 to 3".into())
    );
}

#[test]
fn a_number_that_names_no_option_is_a_typo_not_an_answer() {
    let single = question(false, true);
    assert_eq!(
        parse_line(&single, "9"),
        Err("pick a number from 1 to 3 (=text answers with text)".into())
    );
    let multi = question(true, true);
    assert_eq!(
        parse_line(&multi, "1,9"),
        Err(
            "pick numbers from 1 to 3, separated by commas or spaces (=text answers with text)"
                .into()
        )
    );
    assert_eq!(
        parse_line(&single, "=9"),
        Ok(Typed::Answer(vec!["9".into()]))
    );
    assert_eq!(
        parse_line(&question(false, false), "=9"),
        Err("this question takes no typed answer: pick a number from 1 to 3".into())
    );
}

#[test]
fn a_label_typed_out_is_its_option_and_a_near_miss_asks_first() {
    let single = question(false, true);
    assert_eq!(
        parse_line(&single, "blue"),
        Ok(Typed::Answer(vec!["Blue".into()]))
    );
    assert_eq!(
        parse_line(&single, "gren"),
        Err("did you mean 3. Green? 3 picks it; =gren sends what you typed".into())
    );
    assert_eq!(
        parse_line(&single, "Blu"),
        Err("did you mean 2. Blue? 2 picks it; =Blu sends what you typed".into())
    );
    assert_eq!(
        parse_line(&single, "=gren"),
        Ok(Typed::Answer(vec!["gren".into()]))
    );
    assert_eq!(
        parse_line(&single, "Purple"),
        Ok(Typed::Answer(vec!["Purple".into()]))
    );
    assert_eq!(
        parse_line(&question(false, false), "gren"),
        Err("did you mean 3. Green? 3 picks it".into())
    );
}

#[test]
fn a_secret_is_taken_as_typed_and_never_quoted() {
    let secret = Question {
        secret: true,
        ..question(false, true)
    };
    // Spaces kept; a near miss of an option is not guessed (nor echoed).
    assert_eq!(
        parse_line(&secret, " gren pass "),
        Ok(Typed::Answer(vec![" gren pass ".into()]))
    );
    assert_eq!(
        parse_line(&secret, "gren"),
        Ok(Typed::Answer(vec!["gren".into()]))
    );
    assert_eq!(
        parse_line(&secret, "2"),
        Ok(Typed::Answer(vec!["Blue".into()]))
    );
    assert_eq!(
        parse_line(&secret, "=2"),
        Ok(Typed::Answer(vec!["2".into()]))
    );
    assert_eq!(parse_line(&secret, "  "), Ok(Typed::Reject));
}
