//! Arithmetic evaluator behind the agent's `calculator` tool.
//!
//! Grammar, from lowest to highest precedence:
//!
//! ```text
//! expr    := term (('+' | '-') term)*
//! term    := unary (('*' | '/' | '%') unary)*
//! unary   := ('+' | '-') unary | power
//! power   := primary ('^' unary)?        (right-associative; -2^2 = -4)
//! primary := number | '(' expr ')'
//! ```
//!
//! The whole expression is parsed before anything is computed, so a syntax
//! error is always reported ahead of an arithmetic one. Positions in errors are
//! 0-based character (not byte) indices, because that is what an agent counts.

use thiserror::Error;

/// Longest accepted expression, in characters.
pub const MAX_EXPRESSION_CHARS: usize = 1000;

/// Deepest accepted nesting of parentheses, signs and exponents; bounds the
/// parser's recursion so hostile input cannot overflow the stack.
pub const MAX_NESTING: usize = 200;

/// Why an expression could not be evaluated. Messages are meant to be shown to
/// an agent verbatim, so each one says what to change.
#[derive(Debug, Error, PartialEq)]
pub enum CalcError {
    #[error("empty expression: provide an arithmetic expression such as 2 + 3 * 4")]
    Empty,
    #[error("expression too long: {length} characters, the limit is {limit}", limit = MAX_EXPRESSION_CHARS)]
    TooLong { length: usize },
    #[error(
        "unexpected character {character:?} at position {position}: only digits, '.', spaces, + - * / % ^ and parentheses are allowed"
    )]
    UnexpectedCharacter { character: char, position: usize },
    #[error(
        "comma at position {position}: thousands separators are not allowed, write 1234567 rather than 1,234,567 and use '.' for decimals"
    )]
    ThousandsSeparator { position: usize },
    #[error(
        "invalid number {text:?} at position {position}: a number needs at least one digit and at most one '.'"
    )]
    InvalidNumber { text: String, position: usize },
    #[error("unbalanced parentheses: '(' at position {position} is never closed")]
    UnclosedParenthesis { position: usize },
    #[error("unbalanced parentheses: ')' at position {position} has no matching '('")]
    UnmatchedParenthesis { position: usize },
    #[error("missing operand at position {position}: expected a number or '('")]
    MissingOperand { position: usize },
    #[error(
        "missing operator at position {position}: put one of + - * / % ^ between two values (write 2*(3), not 2(3))"
    )]
    MissingOperator { position: usize },
    #[error(
        "nesting too deep at position {position}: at most {limit} nested parentheses, signs or powers",
        limit = MAX_NESTING
    )]
    TooDeep { position: usize },
    #[error("division by zero at position {position}")]
    DivisionByZero { position: usize },
    #[error("modulo by zero at position {position}")]
    ModuloByZero { position: usize },
    #[error(
        "result is not a finite number at position {position}: the value overflows or is undefined (e.g. a fractional power of a negative number)"
    )]
    NotFinite { position: usize },
}

/// Evaluates `expression` and renders the result as text for the agent.
pub fn evaluate(expression: &str) -> Result<String, CalcError> {
    let chars: Vec<char> = expression.chars().collect();
    if chars.len() > MAX_EXPRESSION_CHARS {
        return Err(CalcError::TooLong {
            length: chars.len(),
        });
    }
    let tokens = lex(&chars)?;
    if tokens.is_empty() {
        return Err(CalcError::Empty);
    }
    check_parentheses(&tokens)?;
    let mut parser = Parser {
        tokens: &tokens,
        next: 0,
        end: chars.len(),
        depth: 0,
    };
    let tree = parser.expr()?;
    if let Some(token) = parser.peek() {
        // Parentheses are balanced, so anything left over is a value that
        // follows another value without an operator between them.
        return Err(CalcError::MissingOperator {
            position: token.position,
        });
    }
    Ok(format_number(eval(&tree)?))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Number(f64),
    Op(Op),
    Open,
    Close,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
}

#[derive(Debug, Clone, Copy)]
struct Token {
    kind: Kind,
    position: usize,
}

fn lex(chars: &[char]) -> Result<Vec<Token>, CalcError> {
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let position = i;
        let kind = match c {
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '0'..='9' | '.' => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                    i += 1;
                }
                let text: String = chars[start..i].iter().collect();
                let dots = text.chars().filter(|&c| c == '.').count();
                let invalid = || CalcError::InvalidNumber {
                    text: text.clone(),
                    position,
                };
                if dots > 1 || dots == text.len() {
                    return Err(invalid());
                }
                let value: f64 = text.parse().map_err(|_| invalid())?;
                if !value.is_finite() {
                    return Err(CalcError::NotFinite { position });
                }
                tokens.push(Token {
                    kind: Kind::Number(value),
                    position,
                });
                continue;
            }
            '+' => Kind::Op(Op::Add),
            '-' => Kind::Op(Op::Sub),
            '*' => Kind::Op(Op::Mul),
            '/' => Kind::Op(Op::Div),
            '%' => Kind::Op(Op::Rem),
            '^' => Kind::Op(Op::Pow),
            '(' => Kind::Open,
            ')' => Kind::Close,
            ',' => return Err(CalcError::ThousandsSeparator { position }),
            character => {
                return Err(CalcError::UnexpectedCharacter {
                    character,
                    position,
                });
            }
        };
        tokens.push(Token { kind, position });
        i += 1;
    }
    Ok(tokens)
}

/// Checked up front so that unbalanced input gets a parenthesis error rather
/// than whatever the parser would stumble on first.
fn check_parentheses(tokens: &[Token]) -> Result<(), CalcError> {
    let mut open = Vec::new();
    for token in tokens {
        match token.kind {
            Kind::Open => open.push(token.position),
            Kind::Close => {
                open.pop().ok_or(CalcError::UnmatchedParenthesis {
                    position: token.position,
                })?;
            }
            _ => {}
        }
    }
    match open.first() {
        Some(&position) => Err(CalcError::UnclosedParenthesis { position }),
        None => Ok(()),
    }
}

#[derive(Debug)]
enum Node {
    Number(f64),
    Negate(Box<Node>),
    Binary {
        op: Op,
        position: usize,
        lhs: Box<Node>,
        rhs: Box<Node>,
    },
}

struct Parser<'t> {
    tokens: &'t [Token],
    next: usize,
    end: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<Token> {
        self.tokens.get(self.next).copied()
    }

    fn position(&self) -> usize {
        self.peek().map_or(self.end, |t| t.position)
    }

    fn peek_op(&self, accepted: &[Op]) -> Option<(Op, usize)> {
        match self.peek()?.kind {
            Kind::Op(op) if accepted.contains(&op) => Some((op, self.position())),
            _ => None,
        }
    }

    fn expr(&mut self) -> Result<Node, CalcError> {
        self.binary_chain(&[Op::Add, Op::Sub], Self::term)
    }

    fn term(&mut self) -> Result<Node, CalcError> {
        self.binary_chain(&[Op::Mul, Op::Div, Op::Rem], Self::unary)
    }

    /// Left-associative chain, built in a loop so long sums do not recurse.
    fn binary_chain(
        &mut self,
        ops: &[Op],
        operand: fn(&mut Self) -> Result<Node, CalcError>,
    ) -> Result<Node, CalcError> {
        let mut lhs = operand(self)?;
        while let Some((op, position)) = self.peek_op(ops) {
            self.next += 1;
            let rhs = operand(self)?;
            lhs = Node::Binary {
                op,
                position,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Node, CalcError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(CalcError::TooDeep {
                position: self.position(),
            });
        }
        let node = match self.peek_op(&[Op::Add, Op::Sub]) {
            Some((Op::Sub, _)) => {
                self.next += 1;
                Node::Negate(Box::new(self.unary()?))
            }
            Some(_) => {
                self.next += 1;
                self.unary()?
            }
            None => self.power()?,
        };
        self.depth -= 1;
        Ok(node)
    }

    fn power(&mut self) -> Result<Node, CalcError> {
        let base = self.primary()?;
        let Some((op, position)) = self.peek_op(&[Op::Pow]) else {
            return Ok(base);
        };
        self.next += 1;
        // The exponent is a full `unary` so that 2^-1 and 2^3^2 work.
        let exponent = self.unary()?;
        Ok(Node::Binary {
            op,
            position,
            lhs: Box::new(base),
            rhs: Box::new(exponent),
        })
    }

    fn primary(&mut self) -> Result<Node, CalcError> {
        let position = self.position();
        match self.peek().map(|t| t.kind) {
            Some(Kind::Number(value)) => {
                self.next += 1;
                Ok(Node::Number(value))
            }
            Some(Kind::Open) => {
                self.next += 1;
                let inner = self.expr()?;
                match self.peek() {
                    Some(Token {
                        kind: Kind::Close, ..
                    }) => {
                        self.next += 1;
                        Ok(inner)
                    }
                    // Balance was checked, so this is a value directly after
                    // another one inside the parentheses.
                    Some(token) => Err(CalcError::MissingOperator {
                        position: token.position,
                    }),
                    None => Err(CalcError::UnclosedParenthesis { position }),
                }
            }
            _ => Err(CalcError::MissingOperand { position }),
        }
    }
}

fn eval(node: &Node) -> Result<f64, CalcError> {
    match node {
        Node::Number(value) => Ok(*value),
        Node::Negate(inner) => Ok(-eval(inner)?),
        Node::Binary {
            op,
            position,
            lhs,
            rhs,
        } => {
            let (a, b, position) = (eval(lhs)?, eval(rhs)?, *position);
            let value = match op {
                Op::Add => a + b,
                Op::Sub => a - b,
                Op::Mul => a * b,
                Op::Div if b == 0.0 => return Err(CalcError::DivisionByZero { position }),
                Op::Div => a / b,
                Op::Rem if b == 0.0 => return Err(CalcError::ModuloByZero { position }),
                Op::Rem => floored_remainder(a, b),
                Op::Pow => a.powf(b),
            };
            if value.is_finite() {
                Ok(value)
            } else {
                Err(CalcError::NotFinite { position })
            }
        }
    }
}

/// Remainder whose sign follows the divisor (-7 % 3 = 2), as in Python and
/// spreadsheets, which is what agents tend to expect.
fn floored_remainder(a: f64, b: f64) -> f64 {
    let r = a % b;
    if r != 0.0 && (r < 0.0) != (b < 0.0) {
        r + b
    } else {
        r
    }
}

/// Renders a finite value. Integers below 1e15 print exactly; other values get
/// at most 10 decimals and 15 significant digits (f64's reliable precision), so
/// binary noise such as 0.30000000000000004 never shows. Very large or tiny
/// magnitudes use scientific notation with 10 significant digits, which keeps
/// them short and stops tiny values from rounding to 0.
fn format_number(value: f64) -> String {
    // Adding 0.0 turns -0.0 into +0.0.
    let value = value + 0.0;
    let magnitude = value.abs();
    if value.fract() == 0.0 && magnitude < 1e15 {
        // Exact: integral and far inside i64's range.
        return format!("{}", value as i64);
    }
    let text = if (1e-6..1e15).contains(&magnitude) {
        let integer_digits = format!("{:.0}", magnitude.trunc()).len();
        let decimals = 15usize.saturating_sub(integer_digits).min(10);
        trim_fraction(&format!("{value:.decimals$}")).to_owned()
    } else {
        let scientific = format!("{value:.9e}");
        match scientific.split_once('e') {
            Some((mantissa, exponent)) => format!("{}e{exponent}", trim_fraction(mantissa)),
            None => scientific,
        }
    };
    if text == "-0" { "0".to_owned() } else { text }
}

fn trim_fraction(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(expression: &str) -> String {
        match evaluate(expression) {
            Ok(text) => text,
            Err(e) => panic!("{expression:?} failed: {e}"),
        }
    }

    fn err(expression: &str) -> CalcError {
        match evaluate(expression) {
            Ok(text) => panic!("{expression:?} unexpectedly gave {text}"),
            Err(e) => e,
        }
    }

    #[test]
    fn integers_and_precedence() {
        assert_eq!(ok("42"), "42");
        assert_eq!(ok("1 + 2 * 3"), "7");
        assert_eq!(ok("(1 + 2) * 3"), "9");
        assert_eq!(ok("10 - 4 - 3"), "3");
        assert_eq!(ok("100 / 10 / 5"), "2");
        assert_eq!(ok("  7\t-\n10 "), "-3");
        assert_eq!(ok("2 * 3 % 4"), "2");
    }

    #[test]
    fn decimals() {
        assert_eq!(ok("2.50"), "2.5");
        assert_eq!(ok(".5 + .5"), "1");
        assert_eq!(ok("5."), "5");
        assert_eq!(ok("1/3"), "0.3333333333");
        assert_eq!(ok("2/3"), "0.6666666667");
        assert_eq!(ok("0.1+0.2"), "0.3");
        assert_eq!(ok("2.5*2"), "5");
        assert_eq!(ok("-1/8"), "-0.125");
        assert_eq!(ok("1234.5678"), "1234.5678");
    }

    #[test]
    fn powers_and_unary_signs() {
        assert_eq!(ok("-2^2"), "-4");
        assert_eq!(ok("(-2)^2"), "4");
        assert_eq!(ok("2^3^2"), "512");
        assert_eq!(ok("2^-1"), "0.5");
        assert_eq!(ok("-(1+2)"), "-3");
        assert_eq!(ok("--3"), "3");
        assert_eq!(ok("+-+3"), "-3");
        assert_eq!(ok("2*-3"), "-6");
        assert_eq!(ok("2^0.5"), "1.4142135624");
        assert_eq!(ok("0^0"), "1");
    }

    #[test]
    fn modulo_follows_divisor_sign() {
        assert_eq!(ok("7 % 3"), "1");
        assert_eq!(ok("-7 % 3"), "2");
        assert_eq!(ok("7 % -3"), "-2");
        assert_eq!(ok("5.5 % 2"), "1.5");
        assert_eq!(ok("6 % 3"), "0");
    }

    #[test]
    fn never_prints_negative_zero() {
        for expression in ["-0", "0*-1", "-0.0", "-(0)", "-6 % 3", "-0/5", "-(1-1)"] {
            let text = ok(expression);
            assert!(!text.starts_with("-0"), "{expression:?} gave {text}");
        }
        assert_eq!(ok("0*-1"), "0");
        assert_eq!(ok("-0.0000000000001 * 0"), "0");
    }

    #[test]
    fn large_and_tiny_values() {
        assert_eq!(ok("999999999999999"), "999999999999999");
        assert_eq!(ok("-999999999999999"), "-999999999999999");
        assert_eq!(ok("10^15"), "1e15");
        assert_eq!(ok("2^60"), "1.152921505e18");
        assert_eq!(ok("1/10^12"), "1e-12");
        assert_eq!(ok("-1.5/10^9"), "-1.5e-9");
        assert_eq!(ok("0.000001"), "0.000001");
        assert_eq!(ok("100000000000000.5"), "100000000000000");
    }

    #[test]
    fn errors_name_positions() {
        assert_eq!(err(""), CalcError::Empty);
        assert_eq!(err("   "), CalcError::Empty);
        assert_eq!(
            err("2 x 3"),
            CalcError::UnexpectedCharacter {
                character: 'x',
                position: 2
            }
        );
        assert_eq!(
            err("1,000 + 1"),
            CalcError::ThousandsSeparator { position: 1 }
        );
        assert_eq!(
            err("1.2.3"),
            CalcError::InvalidNumber {
                text: "1.2.3".into(),
                position: 0
            }
        );
        assert_eq!(
            err("1 + ."),
            CalcError::InvalidNumber {
                text: ".".into(),
                position: 4
            }
        );
        assert_eq!(
            err("((1+2)"),
            CalcError::UnclosedParenthesis { position: 0 }
        );
        assert_eq!(err("1+2)"), CalcError::UnmatchedParenthesis { position: 3 });
        assert_eq!(err(")("), CalcError::UnmatchedParenthesis { position: 0 });
        assert_eq!(err("1 +"), CalcError::MissingOperand { position: 3 });
        assert_eq!(err("* 3"), CalcError::MissingOperand { position: 0 });
        assert_eq!(err("()"), CalcError::MissingOperand { position: 1 });
        assert_eq!(err("(1+)"), CalcError::MissingOperand { position: 3 });
        assert_eq!(err("2 3"), CalcError::MissingOperator { position: 2 });
        assert_eq!(err("2(3)"), CalcError::MissingOperator { position: 1 });
        assert_eq!(err("(1 2)"), CalcError::MissingOperator { position: 3 });
        assert_eq!(err("1 / 0"), CalcError::DivisionByZero { position: 2 });
        assert_eq!(err("1/(2-2)"), CalcError::DivisionByZero { position: 1 });
        assert_eq!(err("5 % 0"), CalcError::ModuloByZero { position: 2 });
        assert_eq!(err("10^400"), CalcError::NotFinite { position: 2 });
        assert_eq!(err("(-8)^(1/3)"), CalcError::NotFinite { position: 4 });
        assert_eq!(err("0^-1"), CalcError::NotFinite { position: 1 });
        assert_eq!(
            err(&format!("1{}", "0".repeat(400))),
            CalcError::NotFinite { position: 0 }
        );
        assert_eq!(err(&"1".repeat(1001)), CalcError::TooLong { length: 1001 });
        assert_eq!(ok(&"1".repeat(MAX_EXPRESSION_CHARS).replace('1', "0")), "0");
        // Characters, not bytes: 'é' is two bytes but one position.
        assert_eq!(
            err("é+€"),
            CalcError::UnexpectedCharacter {
                character: 'é',
                position: 0
            }
        );
        assert_eq!(
            err("1+€"),
            CalcError::UnexpectedCharacter {
                character: '€',
                position: 2
            }
        );
    }

    #[test]
    fn syntax_errors_win_over_arithmetic_errors() {
        assert_eq!(err("1/0 +"), CalcError::MissingOperand { position: 5 });
    }

    #[test]
    fn messages_are_lowercase_and_actionable() {
        let message = err("1,5").to_string();
        assert!(message.contains("thousands separators"), "{message}");
        let message = err("2 # 3").to_string();
        assert_eq!(
            message,
            "unexpected character '#' at position 2: only digits, '.', spaces, + - * / % ^ and parentheses are allowed"
        );
        assert_eq!(err("4/0").to_string(), "division by zero at position 1");
        assert_eq!(err("4%0").to_string(), "modulo by zero at position 1");
        assert!(err("").to_string().starts_with("empty expression"));
        assert!(
            err(&"9".repeat(2000))
                .to_string()
                .starts_with("expression too long: 2000 characters, the limit is 1000")
        );
        assert!(err("(1").to_string().starts_with("unbalanced parentheses"));
        assert!(err("1)").to_string().starts_with("unbalanced parentheses"));
        assert!(err("1-").to_string().starts_with("missing operand"));
        assert!(
            err("10^999")
                .to_string()
                .starts_with("result is not a finite number")
        );
    }

    #[test]
    fn deep_nesting_is_rejected_not_overflowed() {
        let deep = format!("{}1{}", "(".repeat(499), ")".repeat(499));
        assert!(matches!(err(&deep), CalcError::TooDeep { .. }));
        assert!(matches!(err(&"-".repeat(999)), CalcError::TooDeep { .. }));
        let shallow = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert_eq!(ok(&shallow), "1");
        // Long flat chains are loops, not recursion, and stay within limits.
        assert_eq!(ok(&vec!["1"; 500].join("+")), "500");
        assert_eq!(ok("2^3^2"), "512");
        assert!(matches!(
            err(&vec!["2"; 300].join("^")),
            CalcError::TooDeep { .. }
        ));
    }

    #[test]
    fn nasty_inputs_never_panic() {
        let long_power = vec!["2"; 333].join("^");
        let nasty: Vec<String> = [
            "",
            " ",
            "\0",
            "(",
            ")",
            "((",
            "))",
            ")(",
            "()",
            "(()",
            "+",
            "-",
            "*",
            "/",
            "%",
            "^",
            "^^",
            "1^",
            "^1",
            "1^^2",
            "1**2",
            "1//2",
            "1 % % 2",
            ".",
            "..",
            "1..2",
            "..5",
            "1.",
            "-.",
            "1e5",
            "NaN",
            "inf",
            "-inf",
            "0x10",
            "1_000",
            "1,000",
            "١٢٣",
            "🙂",
            "1 + 🙂",
            "\u{200b}1",
            "\u{feff}",
            "1\r\n+\r\n2",
            "9999999999999999999999999999999999",
            "-9999999999999999999.9",
            "1/3*3",
            "(-1)^0.5",
            "(-1)^(1/0)",
            "0/0",
            "0%0",
            "-0^-0",
            "10^308*10",
            "-(10^308)-10^308",
            "2^1024",
            "2^-1075",
            "0.1^400",
            "((((((((((1))))))))))",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .chain([
            "(".repeat(1000),
            ")".repeat(1000),
            "-".repeat(1000),
            "^".repeat(1000),
            "9".repeat(1000),
            ".".repeat(1000),
            "(".repeat(300) + &")".repeat(300),
            "1+".repeat(499) + "1",
            long_power,
            "()".repeat(500),
        ])
        .collect();
        assert!(nasty.len() >= 50);
        for input in &nasty {
            let result = std::panic::catch_unwind(|| evaluate(input));
            match result {
                Ok(Ok(text)) => {
                    assert!(!text.is_empty(), "{input:?}");
                    assert!(!text.starts_with("-0"), "{input:?} gave {text}");
                    assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
                }
                Ok(Err(e)) => assert!(!e.to_string().is_empty()),
                Err(_) => panic!("evaluate panicked on {input:?}"),
            }
        }
    }

    #[test]
    fn deterministic() {
        for expression in ["1/7", "2^0.5*3", "-7%3.3", "1/10^12"] {
            assert_eq!(evaluate(expression), evaluate(expression));
        }
    }
}
