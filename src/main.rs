fn main() {
    // A closed pipe (`sparsecast predict … | head`) ends the program quietly, as for any Unix
    // tool, instead of a panic on the next print.
    #[cfg(unix)]
    // SAFETY: restoring the default action of one signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::process::exit(sparsecast::cli::main());
}
