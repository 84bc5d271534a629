fn main() {
    std::process::exit(claimdag::cli::main())
}
