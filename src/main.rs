fn main() {
    std::process::exit(sparsecast::cli::main());
}
