//! Text in lines: titles, legend entries and category names are wrapped at word
//! boundaries so no label is clipped.

/// Words of `text` in lines of at most `max` characters (a longer word gets its own line).
pub(super) fn wrap(text: &str, max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= max => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}
