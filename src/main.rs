use clap::Parser;

fn main() {
    let cli = shardctl::cli::Cli::parse();
    shardctl::signal::install();
    if let Err(e) = shardctl::cli::run(cli) {
        shardctl::errln!("shardctl: {e}");
        std::process::exit(e.exit_code() as i32);
    }
}
