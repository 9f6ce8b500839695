use toolcell_guest::tool;

struct Calculator;

impl Calculator {
    /// A method.
    #[tool]
    fn add(&self, a: f64) -> f64 {
        a
    }
}

fn main() {}
