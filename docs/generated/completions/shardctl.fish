# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_shardctl_global_optspecs
    string join \n config= output= color= v/verbose y/yes log-file= h/help V/version
end

function __fish_shardctl_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_shardctl_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_shardctl_using_subcommand
    set -l cmd (__fish_shardctl_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c shardctl -n "__fish_shardctl_needs_command" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_needs_command" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_needs_command" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_needs_command" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_needs_command" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_needs_command" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_needs_command" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_needs_command" -s V -l version -d 'Print version'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "sandbox" -d 'Local sandboxes of real MariaDB/MySQL servers for demos and tests'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "init" -d 'Create or migrate the sharding directory on the directory node (idempotent)'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "node" -d 'Nodes registered in the directory'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "function" -d 'Partition functions (range, hash, list, per-key)'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "table" -d 'Sharded and global tables'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "shard" -d 'Shards: add one (creating its schemas), list them'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "lookup" -d 'Which shard, node and schemas hold a key'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "keys" -d 'The keys of per-key functions: assign a new key to the least-loaded open shard, import keys in bulk'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "analyze" -d 'Candidate sharding indexes of a schema, from its foreign keys'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "sample" -d 'Write generated employees-shaped rows (the chapter\'s example) through the router'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "move" -d 'Move a shard to another node (playbooks/move.yaml): copy, replicate, fence, verify, flip, drop the old copy'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "split" -d 'Split a shard (playbooks/split.yaml): a new shard on NODE takes part of the key space; both sides then prune what they no longer own'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "move-keys" -d 'Move some of a shard\'s keys, with their rows, to another existing shard (playbooks/move-keys.yaml): copied, kept current by a change stream from the donor\'s binary log, only those keys fenced for the cut-over, flipped, pruned from the donor'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "merge" -d 'Merge adjacent shards (playbooks/merge.yaml) into the one on NODE: each other shard is copied into it (kept current by a channel from another node), fenced, verified, flipped and dropped'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "rebalance" -d 'Plan the moves that even out the fleet, then apply them'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "resume" -d 'Continue an operation after a crash or a failure, from what the servers show'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "abort" -d 'Roll back an operation that has not flipped: fence lifted, channel removed, copy dropped'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "cutover" -d 'Give an operation waiting in its await-cutover step (`move --cutover manual`) the go-ahead: it fences, confirms and flips'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "revert" -d 'Flip a move waiting in its revert window (`move --revert-window`) back to its old node: fence on the new node, old copy caught up and compared, directory back'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "finalize" -d 'Close a move\'s revert window now: the reverse channel removed, the old copy dropped'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "extend" -d 'Keep a move\'s revert window open longer: its end moves by DURATION, or to TIME'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "stop" -d 'Ask the process driving an operation to stop at its next safe point, as Ctrl-C would'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "pause" -d 'Pause a running copy, catch-up or prune at its next safe point outside any fence; it holds no fence and no lock while paused'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "continue" -d 'Let a paused operation go on'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "throttle" -d 'Change the limits of a running operation; its process picks them up within a second'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "ops" -d 'Operations in the journal, or one with its steps'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "workload" -d 'Write through the router at a steady rate, one thread and connection per shard\'s key stream, retrying as the chapter\'s application does; report acknowledged writes, each stream\'s longest pause, any write lost and any written to a shard not owning its key'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "prune" -d 'Delete the rows a shard no longer owns, in throttled, checkpointed primary-key chunks'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "backup" -d 'Copy a shard\'s schemas into a node (or dump them to a directory) with the binlog coordinates the copy matches'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "filter" -d 'Limit a channel to some schemas (wild-do-table `schema.%`), dynamically'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "change-master" -d 'Point a channel on a node at another node\'s binary log, then start it'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "wait" -d 'Wait until a channel reached a position or its lag is low enough'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "lock" -d 'Raise the write fence on a shard\'s node (journaled; `unlock` lifts it)'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "unlock" -d 'Lift the fence `lock` raised'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "flip" -d 'Point the directory at the target of a move that verified it'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "drop-source" -d 'Drop a shard\'s old copy from a node the directory no longer points at'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "status" -d 'The fleet at a glance: nodes, versions, binary logs, replication channels, shards'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "config" -d 'The inventory: `config check` parses it and connects to every node'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "simulate" -d 'What going from N to M nodes (or a split or move of the directory) would cost under each placement scheme: keys and bytes that change node, balance before and after'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "ids" -d 'Ids unique across shards: `ids check` finds ids on more than one shard and the scheme the fleet follows; `ids sequence` keeps sequences in the directory handing out blocks'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "global" -d 'Global tables kept identical on every shard: check, record the source, sync'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "query" -d 'Run one SELECT on every shard of a function in parallel (read-only, per-shard timeout), `{table}` replaced by each shard\'s table; rows merged, COUNT/SUM/MIN/MAX merged by GROUP BY key'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "exporter" -d 'Serve the fleet\'s metrics to Prometheus on HTTP (`/metrics`): nodes, channels, shards, running operations, the directory, finished operations and fence durations (docs/METRICS.md). Read-only; every scrape within its budget, whatever is down'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "reporting" -d 'A reporting server replicating every shard\'s schemas, kept current across moves, splits and merges: attach, status, sync, detach'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, elvish, powershell)'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "man" -d 'Print the man page (roff): shardctl\'s, or one command\'s'
complete -c shardctl -n "__fish_shardctl_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and not __fish_seen_subcommand_from up status restart down help" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and not __fish_seen_subcommand_from up status restart down help" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and not __fish_seen_subcommand_from up status restart down help" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and not __fish_seen_subcommand_from up status restart down help" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and not __fish_seen_subcommand_from up status restart down help" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and not __fish_seen_subcommand_from up status restart down help" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and not __fish_seen_subcommand_from up status restart down help" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and not __fish_seen_subcommand_from up status restart down help" -f -a "up" -d 'Start N local servers, each with its own datadir, port, server_id and binlog, and write an inventory for them'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and not __fish_seen_subcommand_from up status restart down help" -f -a "status" -d 'Show the sandbox\'s servers and whether they run'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and not __fish_seen_subcommand_from up status restart down help" -f -a "restart" -d 'Restart one server of the sandbox (a clean stop, then a start on the same data and options); the inventory\'s `restart_command` of each node runs this'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and not __fish_seen_subcommand_from up status restart down help" -f -a "down" -d 'Stop the servers the sandbox started; `--purge` also removes its data'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and not __fish_seen_subcommand_from up status restart down help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from up" -l nodes -d 'Number of servers' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from up" -l dir -d 'Where the sandbox lives' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from up" -l base-port -d 'Port of the first server; the other nodes follow, then the replicas' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from up" -l replicas -d 'Replicas per node, each its own read-only server replicating from its node with GTID, listed under the node\'s `replicas:` in the inventory' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from up" -l app-schemas -d 'Grant the application account DML on these schemas only (comma-separated), instead of on every shard schema name' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from up" -l directory-cluster -d 'Put the directory on a Galera cluster of this many servers of its own (dir1, ...; 2 to 9, 3 to survive the loss of one) instead of on node1; needs the galera-4 package. See docs/DIRECTORY_CLUSTER.md' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from up" -l buffer-pool -d 'Small servers for a fleet of dozens of nodes on one machine: an InnoDB buffer pool of this many MiB (default 64), and below 64 also small Aria, key and redo buffers (about 100 MB per server at 32). See docs/BENCHMARKS.md' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from up" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from up" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from up" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from up" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from up" -l gtid-strict -d 'Run every server with gtid_strict_mode (each node has its own GTID domain)'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from up" -l tls -d 'Serve TLS with a CA and certificate made in DIR/tls; the inventory asks for TLS, so replication channels and dump tools use it, verifying the certificate'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from up" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from up" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from up" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from status" -l dir -d 'Where the sandbox lives' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from status" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from status" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from status" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from status" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from status" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from status" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from restart" -l dir -d 'Where the sandbox lives' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from restart" -l node -d 'The node to restart' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from restart" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from restart" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from restart" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from restart" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from restart" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from restart" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from restart" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from down" -l dir -d 'Where the sandbox lives' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from down" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from down" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from down" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from down" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from down" -l purge -d 'Remove the sandbox directory and all data'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from down" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from down" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from down" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from help" -f -a "up" -d 'Start N local servers, each with its own datadir, port, server_id and binlog, and write an inventory for them'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from help" -f -a "status" -d 'Show the sandbox\'s servers and whether they run'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from help" -f -a "restart" -d 'Restart one server of the sandbox (a clean stop, then a start on the same data and options); the inventory\'s `restart_command` of each node runs this'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from help" -f -a "down" -d 'Stop the servers the sandbox started; `--purge` also removes its data'
complete -c shardctl -n "__fish_shardctl_using_subcommand sandbox; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand init" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand init" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand init" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand init" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand init" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand init" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand init" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and not __fish_seen_subcommand_from add list remove help" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and not __fish_seen_subcommand_from add list remove help" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and not __fish_seen_subcommand_from add list remove help" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and not __fish_seen_subcommand_from add list remove help" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and not __fish_seen_subcommand_from add list remove help" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and not __fish_seen_subcommand_from add list remove help" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and not __fish_seen_subcommand_from add list remove help" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and not __fish_seen_subcommand_from add list remove help" -f -a "add" -d 'Register an inventory node in the directory (the address applications use)'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and not __fish_seen_subcommand_from add list remove help" -f -a "list" -d 'List the directory\'s nodes'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and not __fish_seen_subcommand_from add list remove help" -f -a "remove" -d 'Remove a node that holds no shard'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and not __fish_seen_subcommand_from add list remove help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from add" -l host -d 'Host applications connect to (default: the inventory\'s)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from add" -l port -d 'Port applications connect to (default: the inventory\'s)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from add" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from add" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from add" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from add" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from add" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from add" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from list" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from list" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from list" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from list" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from list" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from remove" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from remove" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from remove" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from remove" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from remove" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from remove" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from help" -f -a "add" -d 'Register an inventory node in the directory (the address applications use)'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the directory\'s nodes'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Remove a node that holds no shard'
complete -c shardctl -n "__fish_shardctl_using_subcommand node; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and not __fish_seen_subcommand_from add list remove help" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and not __fish_seen_subcommand_from add list remove help" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and not __fish_seen_subcommand_from add list remove help" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and not __fish_seen_subcommand_from add list remove help" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and not __fish_seen_subcommand_from add list remove help" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and not __fish_seen_subcommand_from add list remove help" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and not __fish_seen_subcommand_from add list remove help" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and not __fish_seen_subcommand_from add list remove help" -f -a "add" -d 'Add a partition function'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and not __fish_seen_subcommand_from add list remove help" -f -a "list" -d 'List partition functions'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and not __fish_seen_subcommand_from add list remove help" -f -a "remove" -d 'Remove a partition function that has no shard and maps no table'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and not __fish_seen_subcommand_from add list remove help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from add" -l type -d 'Mapping kind' -r -f -a "range\t'Ranges of keys, each starting at a lower bound'
hash\t'Consistent hashing: points on an MD5 ring'
list\t'Explicit lists of values'
key\t'One directory row per key, looked up key by key; new keys assigned to the least-loaded open shard'"
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from add" -l key -d 'Key type' -r -f -a "int\t'A signed 64-bit integer'
string\t'A string of up to 255 bytes, compared byte by byte'"
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from add" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from add" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from add" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from add" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from add" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from add" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from list" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from list" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from list" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from list" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from list" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from remove" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from remove" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from remove" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from remove" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from remove" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from remove" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from help" -f -a "add" -d 'Add a partition function'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from help" -f -a "list" -d 'List partition functions'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Remove a partition function that has no shard and maps no table'
complete -c shardctl -n "__fish_shardctl_using_subcommand function; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and not __fish_seen_subcommand_from add list remove help" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and not __fish_seen_subcommand_from add list remove help" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and not __fish_seen_subcommand_from add list remove help" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and not __fish_seen_subcommand_from add list remove help" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and not __fish_seen_subcommand_from add list remove help" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and not __fish_seen_subcommand_from add list remove help" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and not __fish_seen_subcommand_from add list remove help" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and not __fish_seen_subcommand_from add list remove help" -f -a "add" -d 'Map a table: sharded by a function on a column, or global (copied into every shard)'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and not __fish_seen_subcommand_from add list remove help" -f -a "list" -d 'List mapped tables'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and not __fish_seen_subcommand_from add list remove help" -f -a "remove" -d 'Unmap a table; refused for a sharded table while any shard\'s copy holds rows'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and not __fish_seen_subcommand_from add list remove help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from add" -l function -d 'Partition function (sharded tables)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from add" -l column -d 'Sharding column' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from add" -l template-node -d 'Node whose logical schema holds the table while no shard of its schema exists (default: the directory node). Once shards exist, the table is looked for in one' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from add" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from add" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from add" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from add" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from add" -l global -d 'A global table'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from add" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from add" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from list" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from list" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from list" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from list" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from list" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from remove" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from remove" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from remove" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from remove" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from remove" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from remove" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from help" -f -a "add" -d 'Map a table: sharded by a function on a column, or global (copied into every shard)'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from help" -f -a "list" -d 'List mapped tables'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Unmap a table; refused for a sharded table while any shard\'s copy holds rows'
complete -c shardctl -n "__fish_shardctl_using_subcommand table; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and not __fish_seen_subcommand_from add list set-availability remove help" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and not __fish_seen_subcommand_from add list set-availability remove help" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and not __fish_seen_subcommand_from add list set-availability remove help" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and not __fish_seen_subcommand_from add list set-availability remove help" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and not __fish_seen_subcommand_from add list set-availability remove help" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and not __fish_seen_subcommand_from add list set-availability remove help" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and not __fish_seen_subcommand_from add list set-availability remove help" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and not __fish_seen_subcommand_from add list set-availability remove help" -f -a "add" -d 'Add a shard to a function and create its schemas (`<schema>_<id>`) on a node'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and not __fish_seen_subcommand_from add list set-availability remove help" -f -a "list" -d 'List shards with what they cover'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and not __fish_seen_subcommand_from add list set-availability remove help" -f -a "set-availability" -d 'Mark a shard available, closed to writes, or closed to reads and writes (host down, maintenance): routers refuse what it is closed to. Journaled; refused while an operation holds the shard'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and not __fish_seen_subcommand_from add list set-availability remove help" -f -a "remove" -d 'Remove a shard that holds no rows (or never came online) and drop its schemas; its keys fall to the shards next to it'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and not __fish_seen_subcommand_from add list set-availability remove help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from add" -l function -d 'Partition function' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from add" -l node -d 'Node to create the shard on' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from add" -l lower-bound -d 'Range functions: the lower bound' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from add" -l point -d 'Hash functions: `auto` or a 32-hex-digit ring point' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from add" -l values -d 'List functions: comma-separated values' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from add" -l template-node -d 'Node whose logical schemas serve as template when the function has no shard yet (default: the directory node). Later shards copy an existing shard' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from add" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from add" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from add" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from add" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from add" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from add" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from list" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from list" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from list" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from list" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from list" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from set-availability" -l shard -d 'Shard id' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from set-availability" -l reason -d 'Why, kept in the journal (`shardctl ops OP`)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from set-availability" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from set-availability" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from set-availability" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from set-availability" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from set-availability" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from set-availability" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from set-availability" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from remove" -l shard -d 'Shard id' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from remove" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from remove" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from remove" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from remove" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from remove" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from remove" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from help" -f -a "add" -d 'Add a shard to a function and create its schemas (`<schema>_<id>`) on a node'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from help" -f -a "list" -d 'List shards with what they cover'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from help" -f -a "set-availability" -d 'Mark a shard available, closed to writes, or closed to reads and writes (host down, maintenance): routers refuse what it is closed to. Journaled; refused while an operation holds the shard'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Remove a shard that holds no rows (or never came online) and drop its schemas; its keys fall to the shards next to it'
complete -c shardctl -n "__fish_shardctl_using_subcommand shard; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand lookup" -l function -d 'Partition function' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand lookup" -l table -d 'A sharded table, SCHEMA.TABLE' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand lookup" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand lookup" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand lookup" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand lookup" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand lookup" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand lookup" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand lookup" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and not __fish_seen_subcommand_from assign import help" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and not __fish_seen_subcommand_from assign import help" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and not __fish_seen_subcommand_from assign import help" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and not __fish_seen_subcommand_from assign import help" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and not __fish_seen_subcommand_from assign import help" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and not __fish_seen_subcommand_from assign import help" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and not __fish_seen_subcommand_from assign import help" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and not __fish_seen_subcommand_from assign import help" -f -a "assign" -d 'Map new keys of a per-key function, each to the least-loaded open shard (online, available, fewest keys); a key mapped already keeps its shard. Atomic: two callers assigning one key at once get the same shard'
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and not __fish_seen_subcommand_from assign import help" -f -a "import" -d 'Import the key-to-shard rows of a per-key function from a file: one `KEY,SHARD` (or `KEY<TAB>SHARD`) a line, blank lines skipped; or from the rows (key, shard) of a SELECT run on a node. Everything is checked first (a bad line or row, an unknown shard, a key given twice or mapped elsewhere already refuses the whole import, naming the line or row); keys mapped already to the same shard are skipped, so an import can run again'
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and not __fish_seen_subcommand_from assign import help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from assign" -l function -d 'The per-key partition function' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from assign" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from assign" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from assign" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from assign" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from assign" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from assign" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from assign" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from import" -l function -d 'The per-key partition function' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from import" -l file -d 'The file (`-`: standard input)' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from import" -l from-query -d 'One SELECT whose rows are (key, shard), run on `--node` in a read-only session; its rows are numbered from 1 as a file\'s lines are' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from import" -l node -d 'The inventory\'s node `--from-query` runs on' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from import" -l batch -d 'Rows a multi-row INSERT stages at once' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from import" -l chunk -d 'Keys one directory change adds at most' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from import" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from import" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from import" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from import" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from import" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from import" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from import" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from help" -f -a "assign" -d 'Map new keys of a per-key function, each to the least-loaded open shard (online, available, fewest keys); a key mapped already keeps its shard. Atomic: two callers assigning one key at once get the same shard'
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from help" -f -a "import" -d 'Import the key-to-shard rows of a per-key function from a file: one `KEY,SHARD` (or `KEY<TAB>SHARD`) a line, blank lines skipped; or from the rows (key, shard) of a SELECT run on a node. Everything is checked first (a bad line or row, an unknown shard, a key given twice or mapped elsewhere already refuses the whole import, naming the line or row); keys mapped already to the same shard are skipped, so an import can run again'
complete -c shardctl -n "__fish_shardctl_using_subcommand keys; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand analyze" -l schema -d 'The (unsharded) schema to analyse' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand analyze" -l node -d 'Node holding it (default: the directory node)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand analyze" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand analyze" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand analyze" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand analyze" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand analyze" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand analyze" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand analyze" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand sample" -l count -d 'Number of employees to write' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand sample" -l start -d 'First emp_no' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand sample" -l step -d 'Distance between emp_nos' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand sample" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand sample" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand sample" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand sample" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand sample" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand sample" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand sample" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l shard -d 'The shard to move' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l to -d 'The node to move it to' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l playbook -d 'A playbook to run instead of the embedded playbooks/move.yaml' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l fence -d 'Override the lock step\'s fence' -r -f -a "shard\t'Only this shard: its tables are renamed out of reach; other shards keep writing'
read-only\t'The whole source server goes read-only (the chapter\'s fence)'
switch\t'Only this shard, by guard triggers installed ahead and switched on by one row: nothing renamed, whatever the number of tables'"
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l method -d 'Override the backup step\'s method' -r -f -a "native\t'In-process: one consistent snapshot, parallel readers and writers'
dump\t'mariadb-dump / mysqldump piped into the client'
physical\t'mariadb-backup of the shard\'s schemas on the source\'s host into a staging directory on the target\'s host, prepared there and imported (`ALTER TABLE ... IMPORT TABLESPACE`)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l via -d 'What keeps the copy current across nodes: a replication channel on the target (the default) or shardctl\'s change stream read from the source\'s binary log (sets the start-replication step\'s `via`). On one node the stream always does' -r -f -a "channel\t'A replication channel on the target, filtered to the shard\'s schemas'
stream\t'shardctl\'s change stream: reads the source\'s binary log itself and applies the rows to the target'"
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l cutover -d 'Copy and keep the copy current, then wait, unfenced, for `shardctl cutover OP` (`manual`), a daily window (`window`, with --cutover-window) or nothing (`auto`: go on once the before-cutover hooks pass). Without it the cut-over follows the copy at once' -r -f -a "manual\t'When an operator runs `shardctl cutover OP`'
window\t'Inside the daily window (UTC), or earlier on `shardctl cutover OP`'
auto\t'At once, as soon as every `before-cutover` hook passes'"
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l cutover-window -d 'The window for `--cutover window`, HH:MM-HH:MM in UTC (may run past midnight)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l hook -d 'Run COMMAND at STAGE (started, copied, ready, before-cutover, fenced, flipped, done, failed, reverted) with the operation as JSON on stdin; repeatable; added to the inventory\'s hooks. A failing before-cutover hook postpones the cut-over' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l revert-window -d 'Keep the old copy for DURATION after the flip (90s, 30m, 2h, 1d), kept current from the new node: `shardctl revert OP` flips back within it, `shardctl finalize OP` (or its end) drops the old copy. The move\'s process waits that long' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l kill-blockers -d 'Before each try of the shard fence, end the sessions whose open transaction holds the shard\'s tables (otherwise they are only named): sets the lock step\'s kill_blockers'
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l dry-run -d 'Run the procedure with every effect recorded instead of sent: connects read-only, prints the steps with the statements a real run would send on these servers'
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l offline -d 'With --dry-run: connect nowhere (MariaDB 10.11 dialect, placeholders for what only the servers know)'
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -l check -d 'The dry run, reporting only whether the real run would be refused (preflight included); changes nothing'
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand move" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l shard -d 'The shard to split' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l to -d 'The node of the new shard' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l at -d 'Range functions: the key the new shard starts at, or `median`' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l point -d 'Hash functions: the new ring point (default: the middle of the shard\'s arc)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l values -d 'List functions: the values that go to the new shard' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l playbook -d 'A playbook to run instead of the embedded playbooks/split.yaml' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l fence -d 'Override the lock step\'s fence' -r -f -a "shard\t'Only this shard: its tables are renamed out of reach; other shards keep writing'
read-only\t'The whole source server goes read-only (the chapter\'s fence)'
switch\t'Only this shard, by guard triggers installed ahead and switched on by one row: nothing renamed, whatever the number of tables'"
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l via -d 'What keeps the copy current across nodes: a replication channel on the target (the default) or shardctl\'s change stream read from the source\'s binary log (sets the start-replication step\'s `via`). On one node the stream always does' -r -f -a "channel\t'A replication channel on the target, filtered to the shard\'s schemas'
stream\t'shardctl\'s change stream: reads the source\'s binary log itself and applies the rows to the target'"
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l cutover -d 'Copy and keep the copy current, then wait, unfenced, for `shardctl cutover OP` (`manual`), a daily window (`window`, with --cutover-window) or nothing (`auto`: go on once the before-cutover hooks pass). Without it the cut-over follows the copy at once' -r -f -a "manual\t'When an operator runs `shardctl cutover OP`'
window\t'Inside the daily window (UTC), or earlier on `shardctl cutover OP`'
auto\t'At once, as soon as every `before-cutover` hook passes'"
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l cutover-window -d 'The window for `--cutover window`, HH:MM-HH:MM in UTC (may run past midnight)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l hook -d 'Run COMMAND at STAGE (started, copied, ready, before-cutover, fenced, flipped, done, failed, reverted) with the operation as JSON on stdin; repeatable; added to the inventory\'s hooks. A failing before-cutover hook postpones the cut-over' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l kill-blockers -d 'Before each try of the shard fence, end the sessions whose open transaction holds the shard\'s tables (otherwise they are only named): sets the lock step\'s kill_blockers'
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l dry-run -d 'Run the procedure with every effect recorded instead of sent (read-only); prints the statements a real run would send on these servers'
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -l check -d 'The dry run, reporting only whether the real run would be refused'
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand split" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -l function -d 'The partition function whose keys move' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -l range -d 'Range functions: the keys LOWER..UPPER (upper excluded), at the top or the bottom of one shard\'s range' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -l arc -d 'Hash functions: the hashes AFTER..UP_TO (ring points of 32 hex digits; AFTER excluded), at one end of one shard\'s arc' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -l keys -d 'List and per-key functions: the values or keys that move (comma-separated), all of one shard' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -l keys-file -d 'List and per-key functions: a file of the values or keys that move, one per line' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -l to-shard -d 'The shard that takes them (of the same function; beside them for a range or arc)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -l playbook -d 'A playbook to run instead of the embedded playbooks/move-keys.yaml' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -l cutover -d 'Copy and keep the copy current, then wait, unfenced, for `shardctl cutover OP` (`manual`), a daily window (`window`, with --cutover-window) or nothing (`auto`: go on once the before-cutover hooks pass). Without it the cut-over follows the copy at once' -r -f -a "manual\t'When an operator runs `shardctl cutover OP`'
window\t'Inside the daily window (UTC), or earlier on `shardctl cutover OP`'
auto\t'At once, as soon as every `before-cutover` hook passes'"
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -l cutover-window -d 'The window for `--cutover window`, HH:MM-HH:MM in UTC (may run past midnight)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -l hook -d 'Run COMMAND at STAGE (started, copied, ready, before-cutover, fenced, flipped, done, failed, reverted) with the operation as JSON on stdin; repeatable; added to the inventory\'s hooks. A failing before-cutover hook postpones the cut-over' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -l kill-blockers -d 'Before each try of the key fence, end the sessions whose open transaction holds the donor\'s tables (otherwise they are only named): sets the lock step\'s kill_blockers'
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -l dry-run -d 'Run the procedure with every effect recorded instead of sent (read-only); prints the statements a real run would send on these servers'
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -l check -d 'The dry run, reporting only whether the real run would be refused'
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand move-keys" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c shardctl -n "__fish_shardctl_using_subcommand merge" -l shards -d 'The shards to merge (at least two, adjacent, of one function)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand merge" -l to -d 'The node of the merged shard: one of the shards lives there and survives' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand merge" -l playbook -d 'A playbook to run instead of the embedded playbooks/merge.yaml' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand merge" -l via -d 'What keeps the copy current across nodes: a replication channel on the target (the default) or shardctl\'s change stream read from the source\'s binary log (sets the start-replication step\'s `via`). On one node the stream always does' -r -f -a "channel\t'A replication channel on the target, filtered to the shard\'s schemas'
stream\t'shardctl\'s change stream: reads the source\'s binary log itself and applies the rows to the target'"
complete -c shardctl -n "__fish_shardctl_using_subcommand merge" -l hook -d 'Run COMMAND at STAGE of each merge, as with `move --hook` (the inventory\'s hooks run too); the document\'s `kind` is `merge`, with its `survivor` and `retired` shards' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand merge" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand merge" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand merge" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand merge" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand merge" -l dry-run -d 'Run the first merge of the request with every effect recorded instead of sent (read-only); prints the statements a real run would send on these servers'
complete -c shardctl -n "__fish_shardctl_using_subcommand merge" -l check -d 'The dry run, reporting only whether the real run would be refused'
complete -c shardctl -n "__fish_shardctl_using_subcommand merge" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand merge" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand merge" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and not __fish_seen_subcommand_from plan apply help" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and not __fish_seen_subcommand_from plan apply help" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and not __fish_seen_subcommand_from plan apply help" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and not __fish_seen_subcommand_from plan apply help" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and not __fish_seen_subcommand_from plan apply help" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and not __fish_seen_subcommand_from plan apply help" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and not __fish_seen_subcommand_from plan apply help" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and not __fish_seen_subcommand_from plan apply help" -f -a "plan" -d 'Plan the moves (whole shards, or keys given to a neighbour) that even out the fleet (nothing changes)'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and not __fish_seen_subcommand_from plan apply help" -f -a "apply" -d 'Run a plan\'s moves and key moves with concurrency limits'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and not __fish_seen_subcommand_from plan apply help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from plan" -l by -d 'What shards weigh' -r -f -a "size\t'Data plus index bytes'
rows\t'Estimated rows'
count\t'Every shard weighs the same'
load\t'Load: a metrics file\'s figures, or table I/O counters from performance_schema'"
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from plan" -l threshold -d 'Accept nodes up to (1 + F) times the average utilisation' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from plan" -l max-moves -d 'At most this many moves' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from plan" -l drain -d 'Move every shard off this node (repeatable)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from plan" -l exclude-shard -d 'Never move this shard (repeatable)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from plan" -l metrics -d 'With `--by load`: a YAML map from shard id to load (otherwise performance_schema\'s table I/O counters)' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from plan" -l out -d 'Write the plan here (YAML), for `rebalance apply`' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from plan" -l sizes -d 'Shard sizes: `exact` refreshes each shard table\'s statistics first (ANALYZE NO_WRITE_TO_BINLOG TABLE, a few sampled pages per index); `statistics` takes them as they stand, stale right after a move' -r -f -a "statistics\t'information_schema as the tables\' statistics last left them: free, but stale right after a copy or a large change until the server recalculates them'
exact\t'Statistics refreshed first: `ANALYZE NO_WRITE_TO_BINLOG TABLE` on every base table of every shard, then the same information_schema figures. Bytes are then the pages the indexes hold; rows stay an estimate'"
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from plan" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from plan" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from plan" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from plan" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from plan" -l no-key-moves -d 'Move whole shards only. Otherwise, weighed by size or rows, the plan may give the end of a shard\'s range or arc (or some list values) to a neighbour on another node where that moves fewer bytes than whole shards would, or where no whole shard can move; the key distributions of the shards that could give keys are read first (a few indexed queries each)'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from plan" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from plan" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from plan" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from apply" -l parallel -d 'Moves at once' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from apply" -l per-node -d 'Moves a node takes part in at once' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from apply" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from apply" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from apply" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from apply" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from apply" -l replan -d 'When the directory changed since the plan was made, plan again (same weight and the limits recorded in the plan: threshold, max moves, drains, exclusions), print the new moves and apply them instead of refusing'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from apply" -l dry-run -d 'Print each move\'s dry run (read-only, every effect recorded) instead of moving'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from apply" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from apply" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from apply" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from help" -f -a "plan" -d 'Plan the moves (whole shards, or keys given to a neighbour) that even out the fleet (nothing changes)'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from help" -f -a "apply" -d 'Run a plan\'s moves and key moves with concurrency limits'
complete -c shardctl -n "__fish_shardctl_using_subcommand rebalance; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand resume" -l hook -d 'Run COMMAND at STAGE, as with `move --hook` (the inventory\'s hooks run too). The journal keeps only a digest of the operation\'s own before-cutover hooks: give them again here, or a resume still to wait for its cut-over is refused' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand resume" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand resume" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand resume" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand resume" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand resume" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand resume" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand resume" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand abort" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand abort" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand abort" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand abort" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand abort" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand abort" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand abort" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand cutover" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand cutover" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand cutover" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand cutover" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand cutover" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand cutover" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand cutover" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand revert" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand revert" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand revert" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand revert" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand revert" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand revert" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand revert" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand finalize" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand finalize" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand finalize" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand finalize" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand finalize" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand finalize" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand finalize" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand extend" -l by -d 'How much longer the window stays open (90s, 30m, 2h, 1d): its end moves by DURATION, counted from now when the end has passed already (a window its end could not close)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand extend" -l until -d 'When the window ends instead: an RFC 3339 time (2026-11-25T18:00:00Z, 2026-11-25T19:00:00+01:00) or Unix seconds; later than its current end and than now' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand extend" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand extend" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand extend" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand extend" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand extend" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand extend" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand extend" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand stop" -l wait -d 'How long to wait for the owner to let go, seconds' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand stop" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand stop" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand stop" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand stop" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand stop" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand stop" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand stop" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand pause" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand pause" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand pause" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand pause" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand pause" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand pause" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand pause" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand continue" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand continue" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand continue" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand continue" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand continue" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand continue" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand continue" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand throttle" -l max-lag -d 'A prune: pause while a replica of the node lags more than this (seconds, 0 to 86400)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand throttle" -l chunk-ms -d 'A prune: target time of one chunk, milliseconds (1 to 600000)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand throttle" -l max-threads-running -d 'A prune: pause while the node has more running threads than this (1 to 100000)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand throttle" -l workers -d 'A move, split or merge: lanes of its native copy (1 to 64), applied as each lane finishes its table' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand throttle" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand throttle" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand throttle" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand throttle" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand throttle" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand throttle" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand throttle" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand ops" -l state -d 'Only operations in this state (repeatable)' -r -f -a "running\t'Being run, or whose owner died while running it'
failed\t'A step failed; resume or abort it'
done\t'Finished'
aborted\t'Rolled back'"
complete -c shardctl -n "__fish_shardctl_using_subcommand ops" -l kind -d 'Only operations of this kind (repeatable)' -r -f -a "move\t'Moves (also those of a rebalance)'
split\t'Splits'
merge\t'Merges'
prune\t'Prunes'
lock\t'Fences raised by hand (`shardctl lock`)'
availability\t'Availability changes (`shardctl shard set-availability`)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand ops" -l shard -d 'Only operations on this shard' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand ops" -l limit -d 'At most this many operations, newest first' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand ops" -l interval -d 'Seconds between --watch updates' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand ops" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand ops" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand ops" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand ops" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand ops" -l watch -d 'Redraw every --interval seconds until Ctrl-C, or with OP until it has finished (one JSON document per line under --output json)'
complete -c shardctl -n "__fish_shardctl_using_subcommand ops" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand ops" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand ops" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c shardctl -n "__fish_shardctl_using_subcommand workload" -l function -d 'Partition function whose shards are written' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand workload" -l rate -d 'Writes per second, all streams together (one stream and thread per shard, each writing its share over its shard\'s whole key space)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand workload" -l seconds -d 'How long to run, seconds' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand workload" -l tenants -d 'Tenant mode: these keys (comma-separated) get a stream each, writing a new row under the key every time, and together take --tenant-share of the rate' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand workload" -l tenant-share -d 'With --tenants: the share of all writes the tenants take together (above 0, at most 1); the streams over every shard\'s keys share the rest' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand workload" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand workload" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand workload" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand workload" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand workload" -l setup -d 'Create the workload table in every shard first'
complete -c shardctl -n "__fish_shardctl_using_subcommand workload" -l stale-router -d 'Keep the locations loaded at the start and re-read the directory only when a server\'s error says to (read-only, table gone, lost connection, the wrong-shard guard); the check then counts the writes a shard that does not own the key acknowledged'
complete -c shardctl -n "__fish_shardctl_using_subcommand workload" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand workload" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand workload" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand prune" -l shard -d 'The shard to prune' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand prune" -l chunk-ms -d 'Target time of one chunk, milliseconds' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand prune" -l max-lag -d 'Pause while a replica of the node lags more than this (seconds)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand prune" -l max-threads-running -d 'Pause while the node has more running threads than this' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand prune" -l throttle-timeout -d 'Give up (resumably) after waiting this long for the throttle, seconds' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand prune" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand prune" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand prune" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand prune" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand prune" -l dry-run -d 'Show each table\'s predicate and how many rows it matches; delete nothing'
complete -c shardctl -n "__fish_shardctl_using_subcommand prune" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand prune" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand prune" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand backup" -l shard -d 'The shard whose schemas to copy (its node is the source)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand backup" -l method -d 'Copy method' -r -f -a "native\t'In-process: one consistent snapshot, parallel readers and writers'
dump\t'mariadb-dump / mysqldump piped into the client'
physical\t'mariadb-backup of the shard\'s schemas on the source\'s host into a staging directory on the target\'s host, prepared there and imported (`ALTER TABLE ... IMPORT TABLESPACE`)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand backup" -l into -d 'Node to copy into' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand backup" -l to -d 'Directory for a dump file (dump method)' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand backup" -l workers -d 'Parallel workers (native)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand backup" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand backup" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand backup" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand backup" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand backup" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand backup" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand backup" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c shardctl -n "__fish_shardctl_using_subcommand filter" -l node -d 'Node holding the channel' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand filter" -l channel -d 'The replication channel to filter (`shardctl_opN` for an operation\'s)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand filter" -l schemas -d 'Schemas to keep (comma-separated)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand filter" -l do-db -d 'replicate-do-db schemas (comma-separated), rarely needed' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand filter" -l rewrite -d 'Schema renames FROM:TO (comma-separated)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand filter" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand filter" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand filter" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand filter" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand filter" -l persist -d 'Also write the filter into the node\'s option file (its inventory\'s option_file, over its host), restart the server with its restart_command and wait for it: the chapter\'s restart path. A backup of the file is kept'
complete -c shardctl -n "__fish_shardctl_using_subcommand filter" -l remove-persisted -d 'Remove the filter that --persist wrote for this channel (give the same schemas) from the option file, leaving the file as it was; no restart'
complete -c shardctl -n "__fish_shardctl_using_subcommand filter" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand filter" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand filter" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand change-master" -l node -d 'Node that replicates' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand change-master" -l channel -d 'The channel to create on the node' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand change-master" -l from -d 'Source node' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand change-master" -l position -d 'FILE:POS, or a GTID set (MySQL auto-positioning)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand change-master" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand change-master" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand change-master" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand change-master" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand change-master" -l no-start -d 'Do not start the channel'
complete -c shardctl -n "__fish_shardctl_using_subcommand change-master" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand change-master" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand change-master" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand wait" -l node -d 'Node holding the channel' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand wait" -l channel -d 'The channel to wait for' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand wait" -l position -d 'FILE:POS to reach' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand wait" -l lag-below -d 'Lag threshold in seconds' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand wait" -l timeout -d 'Give up after this many seconds' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand wait" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand wait" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand wait" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand wait" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand wait" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand wait" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand wait" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand lock" -l shard -d 'The shard to fence, on the node the directory places it on' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand lock" -l fence -d '`shard` hides the shard\'s tables; `read-only` makes its whole node read-only' -r -f -a "shard\t'Only this shard: its tables are renamed out of reach; other shards keep writing'
read-only\t'The whole source server goes read-only (the chapter\'s fence)'
switch\t'Only this shard, by guard triggers installed ahead and switched on by one row: nothing renamed, whatever the number of tables'"
complete -c shardctl -n "__fish_shardctl_using_subcommand lock" -l timeout -d 'Longest wait for in-flight transactions, seconds' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand lock" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand lock" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand lock" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand lock" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand lock" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand lock" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand lock" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c shardctl -n "__fish_shardctl_using_subcommand unlock" -l shard -d 'The shard whose fence `lock` raised' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand unlock" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand unlock" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand unlock" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand unlock" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand unlock" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand unlock" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand unlock" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand flip" -l shard -d 'The shard to point elsewhere' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand flip" -l to -d 'Target node' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand flip" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand flip" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand flip" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand flip" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand flip" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand flip" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand flip" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand drop-source" -l shard -d 'The shard whose old copy to drop' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand drop-source" -l node -d 'Node holding the old copy' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand drop-source" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand drop-source" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand drop-source" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand drop-source" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand drop-source" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand drop-source" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand drop-source" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand status" -l node -d 'Only these nodes (repeatable)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand status" -l interval -d 'Seconds between --watch updates' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand status" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand status" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand status" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand status" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand status" -l exact -d 'Exact shard sizes: refresh each shard table\'s statistics first (ANALYZE NO_WRITE_TO_BINLOG TABLE), instead of the statistics as they stand (stale right after a move)'
complete -c shardctl -n "__fish_shardctl_using_subcommand status" -l watch -d 'Redraw every --interval seconds until Ctrl-C (one JSON document per line under --output json)'
complete -c shardctl -n "__fish_shardctl_using_subcommand status" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand status" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand status" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and not __fish_seen_subcommand_from check help" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and not __fish_seen_subcommand_from check help" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and not __fish_seen_subcommand_from check help" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and not __fish_seen_subcommand_from check help" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and not __fish_seen_subcommand_from check help" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and not __fish_seen_subcommand_from check help" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and not __fish_seen_subcommand_from check help" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and not __fish_seen_subcommand_from check help" -f -a "check" -d 'Parse the inventory and connect to every node (read-only; nothing else is done); with the directory on a cluster, ask each member its state (exit 3 for a member of another cluster or with wsrep off, 5 for one not Synced in the Primary component)'
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and not __fish_seen_subcommand_from check help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and __fish_seen_subcommand_from check" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and __fish_seen_subcommand_from check" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and __fish_seen_subcommand_from check" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and __fish_seen_subcommand_from check" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and __fish_seen_subcommand_from check" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and __fish_seen_subcommand_from check" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "check" -d 'Parse the inventory and connect to every node (read-only; nothing else is done); with the directory on a cluster, ask each member its state (exit 3 for a member of another cluster or with wsrep off, 5 for one not Synced in the Primary component)'
complete -c shardctl -n "__fish_shardctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l keys-file -d 'Keys, one per line (optionally `KEY<TAB>BYTES`)' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l column -d 'Keys from a live column: every shard\'s copy of a sharded table, else the table on --node (default: the directory node)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l range -d 'Generated integer keys START, START+STEP, ... below END' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l step -d 'Step of --range' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l node -d 'Node holding an unsharded --column table' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l nodes -d 'N: nodes now (default with --function: the nodes holding its shards)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l to-nodes -d 'M: nodes after' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l scheme -d 'Schemes (comma-separated): modulo-crc32, modulo-md5, consistent-md5, consistent-crc32, range, directory. Default: all that apply' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l points -d 'Ring points per node for the consistent schemes' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l function -d 'The directory\'s function (the `directory` scheme, and N by default)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l split -d 'Simulate splitting this shard of --function onto --to' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l move -d 'Simulate moving this shard of --function to --to' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l to -d 'The node a simulated split or move goes to' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l at -d 'Where a simulated split cuts: a key (range) or a ring point (hash); default the median key (range) or the middle of the arc (hash)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l values -d 'Values a simulated list split gives the new shard' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand simulate" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and not __fish_seen_subcommand_from check sequence help" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and not __fish_seen_subcommand_from check sequence help" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and not __fish_seen_subcommand_from check sequence help" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and not __fish_seen_subcommand_from check sequence help" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and not __fish_seen_subcommand_from check sequence help" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and not __fish_seen_subcommand_from check sequence help" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and not __fish_seen_subcommand_from check sequence help" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and not __fish_seen_subcommand_from check sequence help" -f -a "check" -d 'Ids present on more than one shard, each node\'s auto_increment_increment/offset, and which scheme each sharded table follows and where it breaks (exit 5 when one breaks)'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and not __fish_seen_subcommand_from check sequence help" -f -a "sequence" -d 'Sequences in the directory that hand out blocks of ids unique across shards'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and not __fish_seen_subcommand_from check sequence help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from check" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from check" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from check" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from check" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from check" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from check" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from sequence" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from sequence" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from sequence" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from sequence" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from sequence" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from sequence" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from sequence" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from sequence" -f -a "create" -d 'Create a sequence'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from sequence" -f -a "feeds" -d 'Set the columns a sequence\'s ids are stored in (replacing the ones it had)'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from sequence" -f -a "raise" -d 'Raise a sequence\'s next value past the highest id stored in the columns it feeds (after a directory restored from an older backup); never lowers it'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from sequence" -f -a "next" -d 'Take values: a block of --count (default: the sequence\'s block size)'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from sequence" -f -a "show" -d 'Show sequences'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from sequence" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from help" -f -a "check" -d 'Ids present on more than one shard, each node\'s auto_increment_increment/offset, and which scheme each sharded table follows and where it breaks (exit 5 when one breaks)'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from help" -f -a "sequence" -d 'Sequences in the directory that hand out blocks of ids unique across shards'
complete -c shardctl -n "__fish_shardctl_using_subcommand ids; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and not __fish_seen_subcommand_from check source sync help" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and not __fish_seen_subcommand_from check source sync help" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and not __fish_seen_subcommand_from check source sync help" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and not __fish_seen_subcommand_from check source sync help" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and not __fish_seen_subcommand_from check source sync help" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and not __fish_seen_subcommand_from check source sync help" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and not __fish_seen_subcommand_from check source sync help" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and not __fish_seen_subcommand_from check source sync help" -f -a "check" -d 'Compare every global table (or one) on every shard with its source of truth: checksums, then the differing keys (exit 5 when a copy differs or is missing)'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and not __fish_seen_subcommand_from check source sync help" -f -a "source" -d 'Record the shard holding a global table\'s source of truth'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and not __fish_seen_subcommand_from check source sync help" -f -a "sync" -d 'Bring every copy back to the source of truth in chunks, then verify by checksum'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and not __fish_seen_subcommand_from check source sync help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from check" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from check" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from check" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from check" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from check" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from check" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from source" -l shard -d 'The shard' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from source" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from source" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from source" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from source" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from source" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from source" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from source" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from sync" -l chunk -d 'Rows per transaction' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from sync" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from sync" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from sync" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from sync" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from sync" -l dry-run -d 'Show what would change, change nothing'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from sync" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from sync" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from sync" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from help" -f -a "check" -d 'Compare every global table (or one) on every shard with its source of truth: checksums, then the differing keys (exit 5 when a copy differs or is missing)'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from help" -f -a "source" -d 'Record the shard holding a global table\'s source of truth'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from help" -f -a "sync" -d 'Bring every copy back to the source of truth in chunks, then verify by checksum'
complete -c shardctl -n "__fish_shardctl_using_subcommand global; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand query" -l function -d 'The partition function whose shards to query' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand query" -l timeout -d 'Seconds each shard may take (client read timeout and the server\'s statement limit)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand query" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand query" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand query" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand query" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand query" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand query" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand query" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand exporter" -l listen -d 'Serve on this address, HOST:PORT (port 0: a free one, printed at start)' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand exporter" -l budget -d 'The longest one scrape takes, seconds (0.5 to 120): whatever has not answered by then (a node, the directory) is reported down' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand exporter" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand exporter" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand exporter" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand exporter" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand exporter" -l once -d 'Print one scrape on stdout and exit instead of serving'
complete -c shardctl -n "__fish_shardctl_using_subcommand exporter" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand exporter" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand exporter" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and not __fish_seen_subcommand_from attach status sync check detach help" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and not __fish_seen_subcommand_from attach status sync check detach help" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and not __fish_seen_subcommand_from attach status sync check detach help" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and not __fish_seen_subcommand_from attach status sync check detach help" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and not __fish_seen_subcommand_from attach status sync check detach help" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and not __fish_seen_subcommand_from attach status sync check detach help" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and not __fish_seen_subcommand_from attach status sync check detach help" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and not __fish_seen_subcommand_from attach status sync check detach help" -f -a "attach" -d 'Make NODE (in the inventory, holding no shard) a reporting server: a consistent copy of every node\'s shard schemas, then one filtered channel per source node (`shardctl_report_<node>`), started. An interrupted attach is finished by `sync`'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and not __fish_seen_subcommand_from attach status sync check detach help" -f -a "status" -d 'Each reporting server\'s channels (running, lag, the schemas each carries), the moves whose flip it has not followed yet (the next sync joins each at its own position) and the last `reporting check` of each shard'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and not __fish_seen_subcommand_from attach status sync check detach help" -f -a "sync" -d 'Bring every reporting server in line with the directory: channels narrowed to the shards their node still holds, new shards copied and joined, a crashed attach or sync finished. Moves, splits and merges run it at their end by themselves'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and not __fish_seen_subcommand_from attach status sync check detach help" -f -a "check" -d 'Compare each reporting server\'s copy of every shard (or one) with the shard\'s node, chunk by chunk with the verification\'s checksums, at consistent points of the reporting channel (its applier held at the node\'s position for each round). Prints the differing tables and chunks; exits 5 when a copy differs or a shard\'s schemas are not replicated. The result shows in `reporting status`'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and not __fish_seen_subcommand_from attach status sync check detach help" -f -a "detach" -d 'Remove NODE\'s reporting channels and forget it; its copies stay (or go with --drop)'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and not __fish_seen_subcommand_from attach status sync check detach help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from attach" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from attach" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from attach" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from attach" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from attach" -l dry-run -d 'Check and print the plan (sources, channels, schemas); change nothing'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from attach" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from attach" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from attach" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from status" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from status" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from status" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from status" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from status" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from status" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from sync" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from sync" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from sync" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from sync" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from sync" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from sync" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from sync" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from check" -l shard -d 'Only this shard' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from check" -l chunk-rows -d 'Rows per compared chunk' -r
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from check" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from check" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from check" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from check" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from check" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from check" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from detach" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from detach" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from detach" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from detach" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from detach" -l drop -d 'Also drop the shard schemas copied onto it'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from detach" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from detach" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from detach" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from help" -f -a "attach" -d 'Make NODE (in the inventory, holding no shard) a reporting server: a consistent copy of every node\'s shard schemas, then one filtered channel per source node (`shardctl_report_<node>`), started. An interrupted attach is finished by `sync`'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from help" -f -a "status" -d 'Each reporting server\'s channels (running, lag, the schemas each carries), the moves whose flip it has not followed yet (the next sync joins each at its own position) and the last `reporting check` of each shard'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from help" -f -a "sync" -d 'Bring every reporting server in line with the directory: channels narrowed to the shards their node still holds, new shards copied and joined, a crashed attach or sync finished. Moves, splits and merges run it at their end by themselves'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from help" -f -a "check" -d 'Compare each reporting server\'s copy of every shard (or one) with the shard\'s node, chunk by chunk with the verification\'s checksums, at consistent points of the reporting channel (its applier held at the node\'s position for each round). Prints the differing tables and chunks; exits 5 when a copy differs or a shard\'s schemas are not replicated. The result shows in `reporting status`'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from help" -f -a "detach" -d 'Remove NODE\'s reporting channels and forget it; its copies stay (or go with --drop)'
complete -c shardctl -n "__fish_shardctl_using_subcommand reporting; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand completions" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand completions" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand completions" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand completions" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand completions" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand completions" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand completions" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand man" -l config -d 'Inventory file' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand man" -l output -d 'Output format for results: table, or json (docs/JSON.md)' -r -f -a "table\t'Human-readable tables'
json\t'One JSON document (or one JSON object per event for streaming commands)'"
complete -c shardctl -n "__fish_shardctl_using_subcommand man" -l color -d 'When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t'When stdout is a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c shardctl -n "__fish_shardctl_using_subcommand man" -l log-file -d 'Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only' -r -F
complete -c shardctl -n "__fish_shardctl_using_subcommand man" -s v -l verbose -d 'More logs on stderr (-v statements, -vv everything)'
complete -c shardctl -n "__fish_shardctl_using_subcommand man" -s y -l yes -d 'Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal'
complete -c shardctl -n "__fish_shardctl_using_subcommand man" -s h -l help -d 'Print help'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "sandbox" -d 'Local sandboxes of real MariaDB/MySQL servers for demos and tests'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "init" -d 'Create or migrate the sharding directory on the directory node (idempotent)'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "node" -d 'Nodes registered in the directory'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "function" -d 'Partition functions (range, hash, list, per-key)'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "table" -d 'Sharded and global tables'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "shard" -d 'Shards: add one (creating its schemas), list them'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "lookup" -d 'Which shard, node and schemas hold a key'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "keys" -d 'The keys of per-key functions: assign a new key to the least-loaded open shard, import keys in bulk'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "analyze" -d 'Candidate sharding indexes of a schema, from its foreign keys'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "sample" -d 'Write generated employees-shaped rows (the chapter\'s example) through the router'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "move" -d 'Move a shard to another node (playbooks/move.yaml): copy, replicate, fence, verify, flip, drop the old copy'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "split" -d 'Split a shard (playbooks/split.yaml): a new shard on NODE takes part of the key space; both sides then prune what they no longer own'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "move-keys" -d 'Move some of a shard\'s keys, with their rows, to another existing shard (playbooks/move-keys.yaml): copied, kept current by a change stream from the donor\'s binary log, only those keys fenced for the cut-over, flipped, pruned from the donor'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "merge" -d 'Merge adjacent shards (playbooks/merge.yaml) into the one on NODE: each other shard is copied into it (kept current by a channel from another node), fenced, verified, flipped and dropped'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "rebalance" -d 'Plan the moves that even out the fleet, then apply them'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "resume" -d 'Continue an operation after a crash or a failure, from what the servers show'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "abort" -d 'Roll back an operation that has not flipped: fence lifted, channel removed, copy dropped'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "cutover" -d 'Give an operation waiting in its await-cutover step (`move --cutover manual`) the go-ahead: it fences, confirms and flips'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "revert" -d 'Flip a move waiting in its revert window (`move --revert-window`) back to its old node: fence on the new node, old copy caught up and compared, directory back'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "finalize" -d 'Close a move\'s revert window now: the reverse channel removed, the old copy dropped'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "extend" -d 'Keep a move\'s revert window open longer: its end moves by DURATION, or to TIME'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "stop" -d 'Ask the process driving an operation to stop at its next safe point, as Ctrl-C would'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "pause" -d 'Pause a running copy, catch-up or prune at its next safe point outside any fence; it holds no fence and no lock while paused'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "continue" -d 'Let a paused operation go on'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "throttle" -d 'Change the limits of a running operation; its process picks them up within a second'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "ops" -d 'Operations in the journal, or one with its steps'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "workload" -d 'Write through the router at a steady rate, one thread and connection per shard\'s key stream, retrying as the chapter\'s application does; report acknowledged writes, each stream\'s longest pause, any write lost and any written to a shard not owning its key'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "prune" -d 'Delete the rows a shard no longer owns, in throttled, checkpointed primary-key chunks'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "backup" -d 'Copy a shard\'s schemas into a node (or dump them to a directory) with the binlog coordinates the copy matches'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "filter" -d 'Limit a channel to some schemas (wild-do-table `schema.%`), dynamically'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "change-master" -d 'Point a channel on a node at another node\'s binary log, then start it'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "wait" -d 'Wait until a channel reached a position or its lag is low enough'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "lock" -d 'Raise the write fence on a shard\'s node (journaled; `unlock` lifts it)'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "unlock" -d 'Lift the fence `lock` raised'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "flip" -d 'Point the directory at the target of a move that verified it'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "drop-source" -d 'Drop a shard\'s old copy from a node the directory no longer points at'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "status" -d 'The fleet at a glance: nodes, versions, binary logs, replication channels, shards'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "config" -d 'The inventory: `config check` parses it and connects to every node'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "simulate" -d 'What going from N to M nodes (or a split or move of the directory) would cost under each placement scheme: keys and bytes that change node, balance before and after'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "ids" -d 'Ids unique across shards: `ids check` finds ids on more than one shard and the scheme the fleet follows; `ids sequence` keeps sequences in the directory handing out blocks'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "global" -d 'Global tables kept identical on every shard: check, record the source, sync'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "query" -d 'Run one SELECT on every shard of a function in parallel (read-only, per-shard timeout), `{table}` replaced by each shard\'s table; rows merged, COUNT/SUM/MIN/MAX merged by GROUP BY key'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "exporter" -d 'Serve the fleet\'s metrics to Prometheus on HTTP (`/metrics`): nodes, channels, shards, running operations, the directory, finished operations and fence durations (docs/METRICS.md). Read-only; every scrape within its budget, whatever is down'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "reporting" -d 'A reporting server replicating every shard\'s schemas, kept current across moves, splits and merges: attach, status, sync, detach'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, elvish, powershell)'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "man" -d 'Print the man page (roff): shardctl\'s, or one command\'s'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and not __fish_seen_subcommand_from sandbox init node function table shard lookup keys analyze sample move split move-keys merge rebalance resume abort cutover revert finalize extend stop pause continue throttle ops workload prune backup filter change-master wait lock unlock flip drop-source status config simulate ids global query exporter reporting completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from sandbox" -f -a "up" -d 'Start N local servers, each with its own datadir, port, server_id and binlog, and write an inventory for them'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from sandbox" -f -a "status" -d 'Show the sandbox\'s servers and whether they run'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from sandbox" -f -a "restart" -d 'Restart one server of the sandbox (a clean stop, then a start on the same data and options); the inventory\'s `restart_command` of each node runs this'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from sandbox" -f -a "down" -d 'Stop the servers the sandbox started; `--purge` also removes its data'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from node" -f -a "add" -d 'Register an inventory node in the directory (the address applications use)'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from node" -f -a "list" -d 'List the directory\'s nodes'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from node" -f -a "remove" -d 'Remove a node that holds no shard'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from function" -f -a "add" -d 'Add a partition function'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from function" -f -a "list" -d 'List partition functions'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from function" -f -a "remove" -d 'Remove a partition function that has no shard and maps no table'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from table" -f -a "add" -d 'Map a table: sharded by a function on a column, or global (copied into every shard)'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from table" -f -a "list" -d 'List mapped tables'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from table" -f -a "remove" -d 'Unmap a table; refused for a sharded table while any shard\'s copy holds rows'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from shard" -f -a "add" -d 'Add a shard to a function and create its schemas (`<schema>_<id>`) on a node'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from shard" -f -a "list" -d 'List shards with what they cover'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from shard" -f -a "set-availability" -d 'Mark a shard available, closed to writes, or closed to reads and writes (host down, maintenance): routers refuse what it is closed to. Journaled; refused while an operation holds the shard'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from shard" -f -a "remove" -d 'Remove a shard that holds no rows (or never came online) and drop its schemas; its keys fall to the shards next to it'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from keys" -f -a "assign" -d 'Map new keys of a per-key function, each to the least-loaded open shard (online, available, fewest keys); a key mapped already keeps its shard. Atomic: two callers assigning one key at once get the same shard'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from keys" -f -a "import" -d 'Import the key-to-shard rows of a per-key function from a file: one `KEY,SHARD` (or `KEY<TAB>SHARD`) a line, blank lines skipped; or from the rows (key, shard) of a SELECT run on a node. Everything is checked first (a bad line or row, an unknown shard, a key given twice or mapped elsewhere already refuses the whole import, naming the line or row); keys mapped already to the same shard are skipped, so an import can run again'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from rebalance" -f -a "plan" -d 'Plan the moves (whole shards, or keys given to a neighbour) that even out the fleet (nothing changes)'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from rebalance" -f -a "apply" -d 'Run a plan\'s moves and key moves with concurrency limits'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "check" -d 'Parse the inventory and connect to every node (read-only; nothing else is done); with the directory on a cluster, ask each member its state (exit 3 for a member of another cluster or with wsrep off, 5 for one not Synced in the Primary component)'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from ids" -f -a "check" -d 'Ids present on more than one shard, each node\'s auto_increment_increment/offset, and which scheme each sharded table follows and where it breaks (exit 5 when one breaks)'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from ids" -f -a "sequence" -d 'Sequences in the directory that hand out blocks of ids unique across shards'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from global" -f -a "check" -d 'Compare every global table (or one) on every shard with its source of truth: checksums, then the differing keys (exit 5 when a copy differs or is missing)'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from global" -f -a "source" -d 'Record the shard holding a global table\'s source of truth'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from global" -f -a "sync" -d 'Bring every copy back to the source of truth in chunks, then verify by checksum'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from reporting" -f -a "attach" -d 'Make NODE (in the inventory, holding no shard) a reporting server: a consistent copy of every node\'s shard schemas, then one filtered channel per source node (`shardctl_report_<node>`), started. An interrupted attach is finished by `sync`'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from reporting" -f -a "status" -d 'Each reporting server\'s channels (running, lag, the schemas each carries), the moves whose flip it has not followed yet (the next sync joins each at its own position) and the last `reporting check` of each shard'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from reporting" -f -a "sync" -d 'Bring every reporting server in line with the directory: channels narrowed to the shards their node still holds, new shards copied and joined, a crashed attach or sync finished. Moves, splits and merges run it at their end by themselves'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from reporting" -f -a "check" -d 'Compare each reporting server\'s copy of every shard (or one) with the shard\'s node, chunk by chunk with the verification\'s checksums, at consistent points of the reporting channel (its applier held at the node\'s position for each round). Prints the differing tables and chunks; exits 5 when a copy differs or a shard\'s schemas are not replicated. The result shows in `reporting status`'
complete -c shardctl -n "__fish_shardctl_using_subcommand help; and __fish_seen_subcommand_from reporting" -f -a "detach" -d 'Remove NODE\'s reporting channels and forget it; its copies stay (or go with --drop)'
