use clap::Parser;

fn main() {
    let cli = shardctl::cli::Cli::parse();
    let format = cli.output;
    shardctl::signal::install();
    if let Err(e) = shardctl::cli::run(cli) {
        shardctl::errln!("{}", shardctl::cli::error_line(format, &e));
        std::process::exit(e.exit_code() as i32);
    }
}
