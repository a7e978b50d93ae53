#compdef shardctl

autoload -U is-at-least

_shardctl() {
    typeset -A opt_args
    typeset -a _arguments_options
    local ret=1

    if is-at-least 5.2; then
        _arguments_options=(-s -S -C)
    else
        _arguments_options=(-s -C)
    fi

    local context curcontext="$curcontext" state line
    _arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_shardctl_commands" \
"*::: :->shardctl" \
&& ret=0
    case $state in
    (shardctl)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-command-$line[1]:"
        case $line[1] in
            (sandbox)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
":: :_shardctl__subcmd__sandbox_commands" \
"*::: :->sandbox" \
&& ret=0

    case $state in
    (sandbox)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-sandbox-command-$line[1]:"
        case $line[1] in
            (up)
_arguments "${_arguments_options[@]}" : \
'--nodes=[Number of servers]:NODES:_default' \
'--dir=[Where the sandbox lives]:DIR:_files' \
'--base-port=[Port of the first server; the other nodes follow, then the replicas]:BASE_PORT:_default' \
'--replicas=[Replicas per node, each its own read-only server replicating from its node with GTID, listed under the node'\''s \`replicas\:\` in the inventory]:REPLICAS:_default' \
'*--app-schemas=[Grant the application account DML on these schemas only (comma-separated), instead of on every shard schema name]:APP_SCHEMAS:_default' \
'--directory-cluster=[Put the directory on a Galera cluster of this many servers of its own (dir1, ...; 2 to 9, 3 to survive the loss of one) instead of on node1; needs the galera-4 package. See docs/DIRECTORY_CLUSTER.md]:MEMBERS:_default' \
'--buffer-pool=[Small servers for a fleet of dozens of nodes on one machine\: an InnoDB buffer pool of this many MiB (default 64), and below 64 also small Aria, key and redo buffers (about 100 MB per server at 32). See docs/BENCHMARKS.md]:MIB:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'--gtid-strict[Run every server with gtid_strict_mode (each node has its own GTID domain)]' \
'--tls[Serve TLS with a CA and certificate made in DIR/tls; the inventory asks for TLS, so replication channels and dump tools use it, verifying the certificate]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
'--dir=[Where the sandbox lives]:DIR:_files' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(restart)
_arguments "${_arguments_options[@]}" : \
'--dir=[Where the sandbox lives]:DIR:_files' \
'--node=[The node to restart]:NODE:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(down)
_arguments "${_arguments_options[@]}" : \
'--dir=[Where the sandbox lives]:DIR:_files' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'--purge[Remove the sandbox directory and all data]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__sandbox__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-sandbox-help-command-$line[1]:"
        case $line[1] in
            (up)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(restart)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(down)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(init)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(node)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
":: :_shardctl__subcmd__node_commands" \
"*::: :->node" \
&& ret=0

    case $state in
    (node)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-node-command-$line[1]:"
        case $line[1] in
            (add)
_arguments "${_arguments_options[@]}" : \
'--host=[Host applications connect to (default\: the inventory'\''s)]:HOST:_default' \
'--port=[Port applications connect to (default\: the inventory'\''s)]:PORT:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':name -- Inventory name:_default' \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':name -- Node name:_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__node__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-node-help-command-$line[1]:"
        case $line[1] in
            (add)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(function)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
":: :_shardctl__subcmd__function_commands" \
"*::: :->function" \
&& ret=0

    case $state in
    (function)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-function-command-$line[1]:"
        case $line[1] in
            (add)
_arguments "${_arguments_options[@]}" : \
'--type=[Mapping kind]:SHARDING_TYPE:((range\:"Ranges of keys, each starting at a lower bound"
hash\:"Consistent hashing\: points on an MD5 ring"
list\:"Explicit lists of values"
key\:"One directory row per key, looked up key by key; new keys assigned to the least-loaded open shard"))' \
'--key=[Key type]:KEY_TYPE:((int\:"A signed 64-bit integer"
string\:"A string of up to 255 bytes, compared byte by byte"))' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':name -- Function name:_default' \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':name -- Function name:_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__function__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-function-help-command-$line[1]:"
        case $line[1] in
            (add)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(table)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
":: :_shardctl__subcmd__table_commands" \
"*::: :->table" \
&& ret=0

    case $state in
    (table)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-table-command-$line[1]:"
        case $line[1] in
            (add)
_arguments "${_arguments_options[@]}" : \
'(--global)--function=[Partition function (sharded tables)]:FUNCTION:_default' \
'--column=[Sharding column]:COLUMN:_default' \
'--template-node=[Node whose logical schema holds the table while no shard of its schema exists (default\: the directory node). Once shards exist, the table is looked for in one]:TEMPLATE_NODE:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'--global[A global table]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':table -- SCHEMA.TABLE:_default' \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':table -- SCHEMA.TABLE:_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__table__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-table-help-command-$line[1]:"
        case $line[1] in
            (add)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(shard)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
":: :_shardctl__subcmd__shard_commands" \
"*::: :->shard" \
&& ret=0

    case $state in
    (shard)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-shard-command-$line[1]:"
        case $line[1] in
            (add)
_arguments "${_arguments_options[@]}" : \
'--function=[Partition function]:FUNCTION:_default' \
'--node=[Node to create the shard on]:NODE:_default' \
'(--point --values)--lower-bound=[Range functions\: the lower bound]:LOWER_BOUND:_default' \
'(--values)--point=[Hash functions\: \`auto\` or a 32-hex-digit ring point]:POINT:_default' \
'*--values=[List functions\: comma-separated values]:VALUES:_default' \
'--template-node=[Node whose logical schemas serve as template when the function has no shard yet (default\: the directory node). Later shards copy an existing shard]:TEMPLATE_NODE:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(set-availability)
_arguments "${_arguments_options[@]}" : \
'--shard=[Shard id]:SHARD:_default' \
'--reason=[Why, kept in the journal (\`shardctl ops OP\`)]:REASON:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':availability -- What routers may send to it:((available\:"Reads and writes reach the shard"
no-writes\:"Reads reach the shard; routers refuse writes"
unavailable\:"Routers refuse reads and writes; \`query\` refuses the shard'\''s function"))' \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
'--shard=[Shard id]:SHARD:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__shard__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-shard-help-command-$line[1]:"
        case $line[1] in
            (add)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(set-availability)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(lookup)
_arguments "${_arguments_options[@]}" : \
'(--table)--function=[Partition function]:FUNCTION:_default' \
'--table=[A sharded table, SCHEMA.TABLE]:TABLE:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':key -- The sharding key:_default' \
&& ret=0
;;
(keys)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
":: :_shardctl__subcmd__keys_commands" \
"*::: :->keys" \
&& ret=0

    case $state in
    (keys)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-keys-command-$line[1]:"
        case $line[1] in
            (assign)
_arguments "${_arguments_options[@]}" : \
'--function=[The per-key partition function]:FUNCTION:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
'*::keys -- The keys, each assigned in a directory change of its own:_default' \
&& ret=0
;;
(import)
_arguments "${_arguments_options[@]}" : \
'--function=[The per-key partition function]:FUNCTION:_default' \
'(--from-query)--file=[The file (\`-\`\: standard input)]:FILE:_files' \
'--from-query=[One SELECT whose rows are (key, shard), run on \`--node\` in a read-only session; its rows are numbered from 1 as a file'\''s lines are]:FROM_QUERY:_default' \
'--node=[The inventory'\''s node \`--from-query\` runs on]:NODE:_default' \
'--batch=[Rows a multi-row INSERT stages at once]:BATCH:_default' \
'--chunk=[Keys one directory change adds at most]:CHUNK:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__keys__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-keys-help-command-$line[1]:"
        case $line[1] in
            (assign)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(import)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(analyze)
_arguments "${_arguments_options[@]}" : \
'--schema=[The (unsharded) schema to analyse]:SCHEMA:_default' \
'--node=[Node holding it (default\: the directory node)]:NODE:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(sample)
_arguments "${_arguments_options[@]}" : \
'--count=[Number of employees to write]:COUNT:_default' \
'--start=[First emp_no]:START:_default' \
'--step=[Distance between emp_nos]:STEP:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(move)
_arguments "${_arguments_options[@]}" : \
'--shard=[The shard to move]:SHARD:_default' \
'--to=[The node to move it to]:TO:_default' \
'--playbook=[A playbook to run instead of the embedded playbooks/move.yaml]:PLAYBOOK:_files' \
'--fence=[Override the lock step'\''s fence]:FENCE:((shard\:"Only this shard\: its tables are renamed out of reach; other shards keep writing"
read-only\:"The whole source server goes read-only (the chapter'\''s fence)"
switch\:"Only this shard, by guard triggers installed ahead and switched on by one row\: nothing renamed, whatever the number of tables"))' \
'--method=[Override the backup step'\''s method]:METHOD:((native\:"In-process\: one consistent snapshot, parallel readers and writers"
dump\:"mariadb-dump / mysqldump piped into the client"
physical\:"mariadb-backup of the shard'\''s schemas on the source'\''s host into a staging directory on the target'\''s host, prepared there and imported (\`ALTER TABLE ... IMPORT TABLESPACE\`)"))' \
'--via=[What keeps the copy current across nodes\: a replication channel on the target (the default) or shardctl'\''s change stream read from the source'\''s binary log (sets the start-replication step'\''s \`via\`). On one node the stream always does]:VIA:((channel\:"A replication channel on the target, filtered to the shard'\''s schemas"
stream\:"shardctl'\''s change stream\: reads the source'\''s binary log itself and applies the rows to the target"))' \
'--cutover=[Copy and keep the copy current, then wait, unfenced, for \`shardctl cutover OP\` (\`manual\`), a daily window (\`window\`, with --cutover-window) or nothing (\`auto\`\: go on once the before-cutover hooks pass). Without it the cut-over follows the copy at once]:CUTOVER:((manual\:"When an operator runs \`shardctl cutover OP\`"
window\:"Inside the daily window (UTC), or earlier on \`shardctl cutover OP\`"
auto\:"At once, as soon as every \`before-cutover\` hook passes"))' \
'--cutover-window=[The window for \`--cutover window\`, HH\:MM-HH\:MM in UTC (may run past midnight)]:HH:MM-HH:MM:_default' \
'*--hook=[Run COMMAND at STAGE (started, copied, ready, before-cutover, fenced, flipped, done, failed, reverted) with the operation as JSON on stdin; repeatable; added to the inventory'\''s hooks. A failing before-cutover hook postpones the cut-over]:STAGE=COMMAND:_default' \
'--revert-window=[Keep the old copy for DURATION after the flip (90s, 30m, 2h, 1d), kept current from the new node\: \`shardctl revert OP\` flips back within it, \`shardctl finalize OP\` (or its end) drops the old copy. The move'\''s process waits that long]:DURATION:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'--kill-blockers[Before each try of the shard fence, end the sessions whose open transaction holds the shard'\''s tables (otherwise they are only named)\: sets the lock step'\''s kill_blockers]' \
'(--check)--dry-run[Run the procedure with every effect recorded instead of sent\: connects read-only, prints the steps with the statements a real run would send on these servers]' \
'--offline[With --dry-run\: connect nowhere (MariaDB 10.11 dialect, placeholders for what only the servers know)]' \
'--check[The dry run, reporting only whether the real run would be refused (preflight included); changes nothing]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(split)
_arguments "${_arguments_options[@]}" : \
'--shard=[The shard to split]:SHARD:_default' \
'--to=[The node of the new shard]:TO:_default' \
'--at=[Range functions\: the key the new shard starts at, or \`median\`]:AT:_default' \
'(--values)--point=[Hash functions\: the new ring point (default\: the middle of the shard'\''s arc)]:POINT:_default' \
'*--values=[List functions\: the values that go to the new shard]:VALUES:_default' \
'--playbook=[A playbook to run instead of the embedded playbooks/split.yaml]:PLAYBOOK:_files' \
'--fence=[Override the lock step'\''s fence]:FENCE:((shard\:"Only this shard\: its tables are renamed out of reach; other shards keep writing"
read-only\:"The whole source server goes read-only (the chapter'\''s fence)"
switch\:"Only this shard, by guard triggers installed ahead and switched on by one row\: nothing renamed, whatever the number of tables"))' \
'--via=[What keeps the copy current across nodes\: a replication channel on the target (the default) or shardctl'\''s change stream read from the source'\''s binary log (sets the start-replication step'\''s \`via\`). On one node the stream always does]:VIA:((channel\:"A replication channel on the target, filtered to the shard'\''s schemas"
stream\:"shardctl'\''s change stream\: reads the source'\''s binary log itself and applies the rows to the target"))' \
'--cutover=[Copy and keep the copy current, then wait, unfenced, for \`shardctl cutover OP\` (\`manual\`), a daily window (\`window\`, with --cutover-window) or nothing (\`auto\`\: go on once the before-cutover hooks pass). Without it the cut-over follows the copy at once]:CUTOVER:((manual\:"When an operator runs \`shardctl cutover OP\`"
window\:"Inside the daily window (UTC), or earlier on \`shardctl cutover OP\`"
auto\:"At once, as soon as every \`before-cutover\` hook passes"))' \
'--cutover-window=[The window for \`--cutover window\`, HH\:MM-HH\:MM in UTC (may run past midnight)]:HH:MM-HH:MM:_default' \
'*--hook=[Run COMMAND at STAGE (started, copied, ready, before-cutover, fenced, flipped, done, failed, reverted) with the operation as JSON on stdin; repeatable; added to the inventory'\''s hooks. A failing before-cutover hook postpones the cut-over]:STAGE=COMMAND:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'--kill-blockers[Before each try of the shard fence, end the sessions whose open transaction holds the shard'\''s tables (otherwise they are only named)\: sets the lock step'\''s kill_blockers]' \
'(--check)--dry-run[Run the procedure with every effect recorded instead of sent (read-only); prints the statements a real run would send on these servers]' \
'--check[The dry run, reporting only whether the real run would be refused]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(move-keys)
_arguments "${_arguments_options[@]}" : \
'--function=[The partition function whose keys move]:FUNCTION:_default' \
'(--arc --keys --keys-file)--range=[Range functions\: the keys LOWER..UPPER (upper excluded), at the top or the bottom of one shard'\''s range]:RANGE:_default' \
'(--keys --keys-file)--arc=[Hash functions\: the hashes AFTER..UP_TO (ring points of 32 hex digits; AFTER excluded), at one end of one shard'\''s arc]:ARC:_default' \
'(--keys-file)*--keys=[List and per-key functions\: the values or keys that move (comma-separated), all of one shard]:KEYS:_default' \
'--keys-file=[List and per-key functions\: a file of the values or keys that move, one per line]:KEYS_FILE:_files' \
'--to-shard=[The shard that takes them (of the same function; beside them for a range or arc)]:TO_SHARD:_default' \
'--playbook=[A playbook to run instead of the embedded playbooks/move-keys.yaml]:PLAYBOOK:_files' \
'--cutover=[Copy and keep the copy current, then wait, unfenced, for \`shardctl cutover OP\` (\`manual\`), a daily window (\`window\`, with --cutover-window) or nothing (\`auto\`\: go on once the before-cutover hooks pass). Without it the cut-over follows the copy at once]:CUTOVER:((manual\:"When an operator runs \`shardctl cutover OP\`"
window\:"Inside the daily window (UTC), or earlier on \`shardctl cutover OP\`"
auto\:"At once, as soon as every \`before-cutover\` hook passes"))' \
'--cutover-window=[The window for \`--cutover window\`, HH\:MM-HH\:MM in UTC (may run past midnight)]:HH:MM-HH:MM:_default' \
'*--hook=[Run COMMAND at STAGE (started, copied, ready, before-cutover, fenced, flipped, done, failed, reverted) with the operation as JSON on stdin; repeatable; added to the inventory'\''s hooks. A failing before-cutover hook postpones the cut-over]:STAGE=COMMAND:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'--kill-blockers[Before each try of the key fence, end the sessions whose open transaction holds the donor'\''s tables (otherwise they are only named)\: sets the lock step'\''s kill_blockers]' \
'(--check)--dry-run[Run the procedure with every effect recorded instead of sent (read-only); prints the statements a real run would send on these servers]' \
'--check[The dry run, reporting only whether the real run would be refused]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(merge)
_arguments "${_arguments_options[@]}" : \
'*--shards=[The shards to merge (at least two, adjacent, of one function)]:SHARDS:_default' \
'--to=[The node of the merged shard\: one of the shards lives there and survives]:TO:_default' \
'--playbook=[A playbook to run instead of the embedded playbooks/merge.yaml]:PLAYBOOK:_files' \
'--via=[What keeps the copy current across nodes\: a replication channel on the target (the default) or shardctl'\''s change stream read from the source'\''s binary log (sets the start-replication step'\''s \`via\`). On one node the stream always does]:VIA:((channel\:"A replication channel on the target, filtered to the shard'\''s schemas"
stream\:"shardctl'\''s change stream\: reads the source'\''s binary log itself and applies the rows to the target"))' \
'*--hook=[Run COMMAND at STAGE of each merge, as with \`move --hook\` (the inventory'\''s hooks run too); the document'\''s \`kind\` is \`merge\`, with its \`survivor\` and \`retired\` shards]:STAGE=COMMAND:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'(--check)--dry-run[Run the first merge of the request with every effect recorded instead of sent (read-only); prints the statements a real run would send on these servers]' \
'--check[The dry run, reporting only whether the real run would be refused]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(rebalance)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
":: :_shardctl__subcmd__rebalance_commands" \
"*::: :->rebalance" \
&& ret=0

    case $state in
    (rebalance)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-rebalance-command-$line[1]:"
        case $line[1] in
            (plan)
_arguments "${_arguments_options[@]}" : \
'--by=[What shards weigh]:BY:((size\:"Data plus index bytes"
rows\:"Estimated rows"
count\:"Every shard weighs the same"
load\:"Load\: a metrics file'\''s figures, or table I/O counters from performance_schema"))' \
'--threshold=[Accept nodes up to (1 + F) times the average utilisation]:THRESHOLD:_default' \
'--max-moves=[At most this many moves]:MAX_MOVES:_default' \
'*--drain=[Move every shard off this node (repeatable)]:DRAIN:_default' \
'*--exclude-shard=[Never move this shard (repeatable)]:EXCLUDE_SHARD:_default' \
'--metrics=[With \`--by load\`\: a YAML map from shard id to load (otherwise performance_schema'\''s table I/O counters)]:METRICS:_files' \
'--out=[Write the plan here (YAML), for \`rebalance apply\`]:OUT:_files' \
'--sizes=[Shard sizes\: \`exact\` refreshes each shard table'\''s statistics first (ANALYZE NO_WRITE_TO_BINLOG TABLE, a few sampled pages per index); \`statistics\` takes them as they stand, stale right after a move]:SIZES:((statistics\:"information_schema as the tables'\'' statistics last left them\: free, but stale right after a copy or a large change until the server recalculates them"
exact\:"Statistics refreshed first\: \`ANALYZE NO_WRITE_TO_BINLOG TABLE\` on every base table of every shard, then the same information_schema figures. Bytes are then the pages the indexes hold; rows stay an estimate"))' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'--no-key-moves[Move whole shards only. Otherwise, weighed by size or rows, the plan may give the end of a shard'\''s range or arc (or some list values) to a neighbour on another node where that moves fewer bytes than whole shards would, or where no whole shard can move; the key distributions of the shards that could give keys are read first (a few indexed queries each)]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(apply)
_arguments "${_arguments_options[@]}" : \
'--parallel=[Moves at once]:PARALLEL:_default' \
'--per-node=[Moves a node takes part in at once]:PER_NODE:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'--replan[When the directory changed since the plan was made, plan again (same weight and the limits recorded in the plan\: threshold, max moves, drains, exclusions), print the new moves and apply them instead of refusing]' \
'(--replan)--dry-run[Print each move'\''s dry run (read-only, every effect recorded) instead of moving]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':plan -- The plan file:_files' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__rebalance__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-rebalance-help-command-$line[1]:"
        case $line[1] in
            (plan)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(apply)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(resume)
_arguments "${_arguments_options[@]}" : \
'*--hook=[Run COMMAND at STAGE, as with \`move --hook\` (the inventory'\''s hooks run too). The journal keeps only a digest of the operation'\''s own before-cutover hooks\: give them again here, or a resume still to wait for its cut-over is refused]:STAGE=COMMAND:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':op -- Operation id (see `shardctl ops`):_default' \
&& ret=0
;;
(abort)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':op -- Operation id:_default' \
&& ret=0
;;
(cutover)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':op -- The operation waiting in its await-cutover step (see `shardctl ops`):_default' \
&& ret=0
;;
(revert)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':op -- The move waiting in its revert window (see `shardctl ops`):_default' \
&& ret=0
;;
(finalize)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':op -- The move waiting in its revert window (see `shardctl ops`):_default' \
&& ret=0
;;
(extend)
_arguments "${_arguments_options[@]}" : \
'(--until)--by=[How much longer the window stays open (90s, 30m, 2h, 1d)\: its end moves by DURATION, counted from now when the end has passed already (a window its end could not close)]:DURATION:_default' \
'--until=[When the window ends instead\: an RFC 3339 time (2026-11-25T18\:00\:00Z, 2026-11-25T19\:00\:00+01\:00) or Unix seconds; later than its current end and than now]:TIME:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':op -- The move waiting in its revert window (see `shardctl ops`):_default' \
&& ret=0
;;
(stop)
_arguments "${_arguments_options[@]}" : \
'--wait=[How long to wait for the owner to let go, seconds]:WAIT:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':op -- Operation id:_default' \
&& ret=0
;;
(pause)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':op -- Operation id (see `shardctl ops`):_default' \
&& ret=0
;;
(continue)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':op -- Operation id (see `shardctl ops`):_default' \
&& ret=0
;;
(throttle)
_arguments "${_arguments_options[@]}" : \
'--max-lag=[A prune\: pause while a replica of the node lags more than this (seconds, 0 to 86400)]:SECS:_default' \
'--chunk-ms=[A prune\: target time of one chunk, milliseconds (1 to 600000)]:MS:_default' \
'--max-threads-running=[A prune\: pause while the node has more running threads than this (1 to 100000)]:N:_default' \
'--workers=[A move, split or merge\: lanes of its native copy (1 to 64), applied as each lane finishes its table]:N:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':op -- Operation id (see `shardctl ops`):_default' \
&& ret=0
;;
(ops)
_arguments "${_arguments_options[@]}" : \
'*--state=[Only operations in this state (repeatable)]:STATE:((running\:"Being run, or whose owner died while running it"
failed\:"A step failed; resume or abort it"
done\:"Finished"
aborted\:"Rolled back"))' \
'*--kind=[Only operations of this kind (repeatable)]:KIND:((move\:"Moves (also those of a rebalance)"
split\:"Splits"
merge\:"Merges"
prune\:"Prunes"
lock\:"Fences raised by hand (\`shardctl lock\`)"
availability\:"Availability changes (\`shardctl shard set-availability\`)"))' \
'--shard=[Only operations on this shard]:SHARD:_default' \
'--limit=[At most this many operations, newest first]:LIMIT:_default' \
'--interval=[Seconds between --watch updates]:INTERVAL:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'--watch[Redraw every --interval seconds until Ctrl-C, or with OP until it has finished (one JSON document per line under --output json)]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'::op -- Show one operation with its steps and effects:_default' \
&& ret=0
;;
(workload)
_arguments "${_arguments_options[@]}" : \
'--function=[Partition function whose shards are written]:FUNCTION:_default' \
'--rate=[Writes per second, all streams together (one stream and thread per shard, each writing its share over its shard'\''s whole key space)]:RATE:_default' \
'--seconds=[How long to run, seconds]:SECONDS:_default' \
'*--tenants=[Tenant mode\: these keys (comma-separated) get a stream each, writing a new row under the key every time, and together take --tenant-share of the rate]:TENANTS:_default' \
'--tenant-share=[With --tenants\: the share of all writes the tenants take together (above 0, at most 1); the streams over every shard'\''s keys share the rest]:TENANT_SHARE:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'--setup[Create the workload table in every shard first]' \
'--stale-router[Keep the locations loaded at the start and re-read the directory only when a server'\''s error says to (read-only, table gone, lost connection, the wrong-shard guard); the check then counts the writes a shard that does not own the key acknowledged]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(prune)
_arguments "${_arguments_options[@]}" : \
'--shard=[The shard to prune]:SHARD:_default' \
'--chunk-ms=[Target time of one chunk, milliseconds]:CHUNK_MS:_default' \
'--max-lag=[Pause while a replica of the node lags more than this (seconds)]:MAX_LAG:_default' \
'--max-threads-running=[Pause while the node has more running threads than this]:MAX_THREADS_RUNNING:_default' \
'--throttle-timeout=[Give up (resumably) after waiting this long for the throttle, seconds]:THROTTLE_TIMEOUT:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'--dry-run[Show each table'\''s predicate and how many rows it matches; delete nothing]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(backup)
_arguments "${_arguments_options[@]}" : \
'--shard=[The shard whose schemas to copy (its node is the source)]:SHARD:_default' \
'--method=[Copy method]:METHOD:((native\:"In-process\: one consistent snapshot, parallel readers and writers"
dump\:"mariadb-dump / mysqldump piped into the client"
physical\:"mariadb-backup of the shard'\''s schemas on the source'\''s host into a staging directory on the target'\''s host, prepared there and imported (\`ALTER TABLE ... IMPORT TABLESPACE\`)"))' \
'(--to)--into=[Node to copy into]:INTO:_default' \
'--to=[Directory for a dump file (dump method)]:TO:_files' \
'--workers=[Parallel workers (native)]:WORKERS:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(filter)
_arguments "${_arguments_options[@]}" : \
'--node=[Node holding the channel]:NODE:_default' \
'--channel=[The replication channel to filter (\`shardctl_opN\` for an operation'\''s)]:CHANNEL:_default' \
'*--schemas=[Schemas to keep (comma-separated)]:SCHEMAS:_default' \
'*--do-db=[replicate-do-db schemas (comma-separated), rarely needed]:DO_DB:_default' \
'*--rewrite=[Schema renames FROM\:TO (comma-separated)]:REWRITE:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'(--remove-persisted)--persist[Also write the filter into the node'\''s option file (its inventory'\''s option_file, over its host), restart the server with its restart_command and wait for it\: the chapter'\''s restart path. A backup of the file is kept]' \
'--remove-persisted[Remove the filter that --persist wrote for this channel (give the same schemas) from the option file, leaving the file as it was; no restart]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(change-master)
_arguments "${_arguments_options[@]}" : \
'--node=[Node that replicates]:NODE:_default' \
'--channel=[The channel to create on the node]:CHANNEL:_default' \
'--from=[Source node]:FROM:_default' \
'--position=[FILE\:POS, or a GTID set (MySQL auto-positioning)]:POSITION:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'--no-start[Do not start the channel]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(wait)
_arguments "${_arguments_options[@]}" : \
'--node=[Node holding the channel]:NODE:_default' \
'--channel=[The channel to wait for]:CHANNEL:_default' \
'(--lag-below)--position=[FILE\:POS to reach]:POSITION:_default' \
'--lag-below=[Lag threshold in seconds]:LAG_BELOW:_default' \
'--timeout=[Give up after this many seconds]:TIMEOUT:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(lock)
_arguments "${_arguments_options[@]}" : \
'--shard=[The shard to fence, on the node the directory places it on]:SHARD:_default' \
'--fence=[\`shard\` hides the shard'\''s tables; \`read-only\` makes its whole node read-only]:FENCE:((shard\:"Only this shard\: its tables are renamed out of reach; other shards keep writing"
read-only\:"The whole source server goes read-only (the chapter'\''s fence)"
switch\:"Only this shard, by guard triggers installed ahead and switched on by one row\: nothing renamed, whatever the number of tables"))' \
'--timeout=[Longest wait for in-flight transactions, seconds]:TIMEOUT:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(unlock)
_arguments "${_arguments_options[@]}" : \
'--shard=[The shard whose fence \`lock\` raised]:SHARD:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(flip)
_arguments "${_arguments_options[@]}" : \
'--shard=[The shard to point elsewhere]:SHARD:_default' \
'--to=[Target node]:TO:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(drop-source)
_arguments "${_arguments_options[@]}" : \
'--shard=[The shard whose old copy to drop]:SHARD:_default' \
'--node=[Node holding the old copy]:NODE:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
'*--node=[Only these nodes (repeatable)]:NODES:_default' \
'--interval=[Seconds between --watch updates]:INTERVAL:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'(--watch)--exact[Exact shard sizes\: refresh each shard table'\''s statistics first (ANALYZE NO_WRITE_TO_BINLOG TABLE), instead of the statistics as they stand (stale right after a move)]' \
'--watch[Redraw every --interval seconds until Ctrl-C (one JSON document per line under --output json)]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(config)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
":: :_shardctl__subcmd__config_commands" \
"*::: :->config" \
&& ret=0

    case $state in
    (config)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-config-command-$line[1]:"
        case $line[1] in
            (check)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__config__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-config-help-command-$line[1]:"
        case $line[1] in
            (check)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(simulate)
_arguments "${_arguments_options[@]}" : \
'--keys-file=[Keys, one per line (optionally \`KEY<TAB>BYTES\`)]:FILE:_files' \
'--column=[Keys from a live column\: every shard'\''s copy of a sharded table, else the table on --node (default\: the directory node)]:SCHEMA.TABLE.COLUMN:_default' \
'--range=[Generated integer keys START, START+STEP, ... below END]:START..END:_default' \
'--step=[Step of --range]:STEP:_default' \
'--node=[Node holding an unsharded --column table]:NODE:_default' \
'--nodes=[N\: nodes now (default with --function\: the nodes holding its shards)]:NODES:_default' \
'--to-nodes=[M\: nodes after]:TO_NODES:_default' \
'*--scheme=[Schemes (comma-separated)\: modulo-crc32, modulo-md5, consistent-md5, consistent-crc32, range, directory. Default\: all that apply]:SCHEMES:_default' \
'--points=[Ring points per node for the consistent schemes]:POINTS:_default' \
'--function=[The directory'\''s function (the \`directory\` scheme, and N by default)]:FUNCTION:_default' \
'(--move)--split=[Simulate splitting this shard of --function onto --to]:SHARD:_default' \
'--move=[Simulate moving this shard of --function to --to]:SHARD:_default' \
'--to=[The node a simulated split or move goes to]:TO:_default' \
'--at=[Where a simulated split cuts\: a key (range) or a ring point (hash); default the median key (range) or the middle of the arc (hash)]:AT:_default' \
'*--values=[Values a simulated list split gives the new shard]:VALUES:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(ids)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
":: :_shardctl__subcmd__ids_commands" \
"*::: :->ids" \
&& ret=0

    case $state in
    (ids)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-ids-command-$line[1]:"
        case $line[1] in
            (check)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(sequence)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
":: :_shardctl__subcmd__ids__subcmd__sequence_commands" \
"*::: :->sequence" \
&& ret=0

    case $state in
    (sequence)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-ids-sequence-command-$line[1]:"
        case $line[1] in
            (create)
_arguments "${_arguments_options[@]}" : \
'--start=[First value]:START:_default' \
'--block=[Values per block a router takes at once]:BLOCK:_default' \
'--max=[Largest value]:MAX:_default' \
'*--feeds=[A column its ids are stored in, SCHEMA.TABLE.COLUMN of a sharded table (repeat for several)\: \`ids check\` and \`status\` then name the sequence when its next value is at or below an id stored there, as after a directory restored from an older backup]:SCHEMA.TABLE.COLUMN:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':name -- Its name:_default' \
&& ret=0
;;
(feeds)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':name -- The sequence:_default' \
'*::columns -- SCHEMA.TABLE.COLUMN of a sharded table, an integer column:_default' \
&& ret=0
;;
(raise)
_arguments "${_arguments_options[@]}" : \
'--margin=[Values left unused above the highest stored id, for blocks routers took before the restore and have not stored yet (default\: one block; give block × routers, or restart the routers first)]:MARGIN:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':name -- The sequence:_default' \
&& ret=0
;;
(next)
_arguments "${_arguments_options[@]}" : \
'--count=[How many values]:COUNT:_default' \
'--lock-wait=[Seconds to wait for the sequence'\''s row lock]:LOCK_WAIT:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':name -- The sequence:_default' \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
'::name -- One sequence (default\: all):_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__ids__subcmd__sequence__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-ids-sequence-help-command-$line[1]:"
        case $line[1] in
            (create)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(feeds)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(raise)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(next)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__ids__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-ids-help-command-$line[1]:"
        case $line[1] in
            (check)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(sequence)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__ids__subcmd__help__subcmd__sequence_commands" \
"*::: :->sequence" \
&& ret=0

    case $state in
    (sequence)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-ids-help-sequence-command-$line[1]:"
        case $line[1] in
            (create)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(feeds)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(raise)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(next)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(global)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
":: :_shardctl__subcmd__global_commands" \
"*::: :->global" \
&& ret=0

    case $state in
    (global)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-global-command-$line[1]:"
        case $line[1] in
            (check)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
'::table -- One global table, SCHEMA.TABLE (default\: all):_default' \
&& ret=0
;;
(source)
_arguments "${_arguments_options[@]}" : \
'--shard=[The shard]:SHARD:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':table -- The global table, SCHEMA.TABLE:_default' \
&& ret=0
;;
(sync)
_arguments "${_arguments_options[@]}" : \
'--chunk=[Rows per transaction]:CHUNK:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'--dry-run[Show what would change, change nothing]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
'::table -- One global table, SCHEMA.TABLE (default\: all):_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__global__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-global-help-command-$line[1]:"
        case $line[1] in
            (check)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(source)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(sync)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(query)
_arguments "${_arguments_options[@]}" : \
'--function=[The partition function whose shards to query]:FUNCTION:_default' \
'--timeout=[Seconds each shard may take (client read timeout and the server'\''s statement limit)]:TIMEOUT:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':sql -- One SELECT; `{table}` (or `{schema.table}`) stands for each shard'\''s physical table:_default' \
&& ret=0
;;
(exporter)
_arguments "${_arguments_options[@]}" : \
'--listen=[Serve on this address, HOST\:PORT (port 0\: a free one, printed at start)]:HOST:PORT:_default' \
'--budget=[The longest one scrape takes, seconds (0.5 to 120)\: whatever has not answered by then (a node, the directory) is reported down]:SECS:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'(--listen)--once[Print one scrape on stdout and exit instead of serving]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(reporting)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
":: :_shardctl__subcmd__reporting_commands" \
"*::: :->reporting" \
&& ret=0

    case $state in
    (reporting)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-reporting-command-$line[1]:"
        case $line[1] in
            (attach)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'--dry-run[Check and print the plan (sources, channels, schemas); change nothing]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':node -- The reporting node:_default' \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
'::node -- Only this reporting node:_default' \
&& ret=0
;;
(sync)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(check)
_arguments "${_arguments_options[@]}" : \
'--shard=[Only this shard]:SHARD:_default' \
'--chunk-rows=[Rows per compared chunk]:CHUNK_ROWS:_default' \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(detach)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'--drop[Also drop the shard schemas copied onto it]' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':node -- The reporting node:_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__reporting__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-reporting-help-command-$line[1]:"
        case $line[1] in
            (attach)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(sync)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(check)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(detach)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(completions)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
':shell -- The shell:(bash elvish fish powershell zsh)' \
&& ret=0
;;
(man)
_arguments "${_arguments_options[@]}" : \
'--config=[Inventory file]:CONFIG:_files' \
'--output=[Output format for results\: table, or json (docs/JSON.md)]:OUTPUT:((table\:"Human-readable tables"
json\:"One JSON document (or one JSON object per event for streaming commands)"))' \
'--color=[When to colour output\: auto (on a terminal, unless NO_COLOR is set), always, never]:COLOR:((auto\:"When stdout is a terminal and NO_COLOR is unset"
always\:"Always"
never\:"Never"))' \
'--log-file=[Append a full log of the run to this file (every statement sent, every message, timestamped; whatever -v and the terminal), created readable by its owner only]:PATH:_files' \
'*-v[More logs on stderr (-v statements, -vv everything)]' \
'*--verbose[More logs on stderr (-v statements, -vv everything)]' \
'-y[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'--yes[Run destructive commands (move, split, prune, rebalance apply, drop-source, abort) without asking; required when stdin is not a terminal]' \
'-h[Print help]' \
'--help[Print help]' \
'::command -- A command whose page to print (e.g. `move`):_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-help-command-$line[1]:"
        case $line[1] in
            (sandbox)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__help__subcmd__sandbox_commands" \
"*::: :->sandbox" \
&& ret=0

    case $state in
    (sandbox)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-help-sandbox-command-$line[1]:"
        case $line[1] in
            (up)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(restart)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(down)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(init)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(node)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__help__subcmd__node_commands" \
"*::: :->node" \
&& ret=0

    case $state in
    (node)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-help-node-command-$line[1]:"
        case $line[1] in
            (add)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(function)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__help__subcmd__function_commands" \
"*::: :->function" \
&& ret=0

    case $state in
    (function)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-help-function-command-$line[1]:"
        case $line[1] in
            (add)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(table)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__help__subcmd__table_commands" \
"*::: :->table" \
&& ret=0

    case $state in
    (table)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-help-table-command-$line[1]:"
        case $line[1] in
            (add)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(shard)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__help__subcmd__shard_commands" \
"*::: :->shard" \
&& ret=0

    case $state in
    (shard)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-help-shard-command-$line[1]:"
        case $line[1] in
            (add)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(set-availability)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(lookup)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(keys)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__help__subcmd__keys_commands" \
"*::: :->keys" \
&& ret=0

    case $state in
    (keys)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-help-keys-command-$line[1]:"
        case $line[1] in
            (assign)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(import)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(analyze)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(sample)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(move)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(split)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(move-keys)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(merge)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(rebalance)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__help__subcmd__rebalance_commands" \
"*::: :->rebalance" \
&& ret=0

    case $state in
    (rebalance)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-help-rebalance-command-$line[1]:"
        case $line[1] in
            (plan)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(apply)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(resume)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(abort)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(cutover)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(revert)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(finalize)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(extend)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(stop)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(pause)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(continue)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(throttle)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(ops)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(workload)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(prune)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(backup)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(filter)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(change-master)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(wait)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(lock)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(unlock)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(flip)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(drop-source)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(config)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__help__subcmd__config_commands" \
"*::: :->config" \
&& ret=0

    case $state in
    (config)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-help-config-command-$line[1]:"
        case $line[1] in
            (check)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(simulate)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(ids)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__help__subcmd__ids_commands" \
"*::: :->ids" \
&& ret=0

    case $state in
    (ids)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-help-ids-command-$line[1]:"
        case $line[1] in
            (check)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(sequence)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__help__subcmd__ids__subcmd__sequence_commands" \
"*::: :->sequence" \
&& ret=0

    case $state in
    (sequence)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-help-ids-sequence-command-$line[1]:"
        case $line[1] in
            (create)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(feeds)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(raise)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(next)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(global)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__help__subcmd__global_commands" \
"*::: :->global" \
&& ret=0

    case $state in
    (global)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-help-global-command-$line[1]:"
        case $line[1] in
            (check)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(source)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(sync)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(query)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(exporter)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(reporting)
_arguments "${_arguments_options[@]}" : \
":: :_shardctl__subcmd__help__subcmd__reporting_commands" \
"*::: :->reporting" \
&& ret=0

    case $state in
    (reporting)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:shardctl-help-reporting-command-$line[1]:"
        case $line[1] in
            (attach)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(sync)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(check)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(detach)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(completions)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(man)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
}

(( $+functions[_shardctl_commands] )) ||
_shardctl_commands() {
    local commands; commands=(
'sandbox:Local sandboxes of real MariaDB/MySQL servers for demos and tests' \
'init:Create or migrate the sharding directory on the directory node (idempotent)' \
'node:Nodes registered in the directory' \
'function:Partition functions (range, hash, list, per-key)' \
'table:Sharded and global tables' \
'shard:Shards\: add one (creating its schemas), list them' \
'lookup:Which shard, node and schemas hold a key' \
'keys:The keys of per-key functions\: assign a new key to the least-loaded open shard, import keys in bulk' \
'analyze:Candidate sharding indexes of a schema, from its foreign keys' \
'sample:Write generated employees-shaped rows (the chapter'\''s example) through the router' \
'move:Move a shard to another node (playbooks/move.yaml)\: copy, replicate, fence, verify, flip, drop the old copy' \
'split:Split a shard (playbooks/split.yaml)\: a new shard on NODE takes part of the key space; both sides then prune what they no longer own' \
'move-keys:Move some of a shard'\''s keys, with their rows, to another existing shard (playbooks/move-keys.yaml)\: copied, kept current by a change stream from the donor'\''s binary log, only those keys fenced for the cut-over, flipped, pruned from the donor' \
'merge:Merge adjacent shards (playbooks/merge.yaml) into the one on NODE\: each other shard is copied into it (kept current by a channel from another node), fenced, verified, flipped and dropped' \
'rebalance:Plan the moves that even out the fleet, then apply them' \
'resume:Continue an operation after a crash or a failure, from what the servers show' \
'abort:Roll back an operation that has not flipped\: fence lifted, channel removed, copy dropped' \
'cutover:Give an operation waiting in its await-cutover step (\`move --cutover manual\`) the go-ahead\: it fences, confirms and flips' \
'revert:Flip a move waiting in its revert window (\`move --revert-window\`) back to its old node\: fence on the new node, old copy caught up and compared, directory back' \
'finalize:Close a move'\''s revert window now\: the reverse channel removed, the old copy dropped' \
'extend:Keep a move'\''s revert window open longer\: its end moves by DURATION, or to TIME' \
'stop:Ask the process driving an operation to stop at its next safe point, as Ctrl-C would' \
'pause:Pause a running copy, catch-up or prune at its next safe point outside any fence; it holds no fence and no lock while paused' \
'continue:Let a paused operation go on' \
'throttle:Change the limits of a running operation; its process picks them up within a second' \
'ops:Operations in the journal, or one with its steps' \
'workload:Write through the router at a steady rate, one thread and connection per shard'\''s key stream, retrying as the chapter'\''s application does; report acknowledged writes, each stream'\''s longest pause, any write lost and any written to a shard not owning its key' \
'prune:Delete the rows a shard no longer owns, in throttled, checkpointed primary-key chunks' \
'backup:Copy a shard'\''s schemas into a node (or dump them to a directory) with the binlog coordinates the copy matches' \
'filter:Limit a channel to some schemas (wild-do-table \`schema.%\`), dynamically' \
'change-master:Point a channel on a node at another node'\''s binary log, then start it' \
'wait:Wait until a channel reached a position or its lag is low enough' \
'lock:Raise the write fence on a shard'\''s node (journaled; \`unlock\` lifts it)' \
'unlock:Lift the fence \`lock\` raised' \
'flip:Point the directory at the target of a move that verified it' \
'drop-source:Drop a shard'\''s old copy from a node the directory no longer points at' \
'status:The fleet at a glance\: nodes, versions, binary logs, replication channels, shards' \
'config:The inventory\: \`config check\` parses it and connects to every node' \
'simulate:What going from N to M nodes (or a split or move of the directory) would cost under each placement scheme\: keys and bytes that change node, balance before and after' \
'ids:Ids unique across shards\: \`ids check\` finds ids on more than one shard and the scheme the fleet follows; \`ids sequence\` keeps sequences in the directory handing out blocks' \
'global:Global tables kept identical on every shard\: check, record the source, sync' \
'query:Run one SELECT on every shard of a function in parallel (read-only, per-shard timeout), \`{table}\` replaced by each shard'\''s table; rows merged, COUNT/SUM/MIN/MAX merged by GROUP BY key' \
'exporter:Serve the fleet'\''s metrics to Prometheus on HTTP (\`/metrics\`)\: nodes, channels, shards, running operations, the directory, finished operations and fence durations (docs/METRICS.md). Read-only; every scrape within its budget, whatever is down' \
'reporting:A reporting server replicating every shard'\''s schemas, kept current across moves, splits and merges\: attach, status, sync, detach' \
'completions:Print a shell completion script (bash, zsh, fish, elvish, powershell)' \
'man:Print the man page (roff)\: shardctl'\''s, or one command'\''s' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__abort_commands] )) ||
_shardctl__subcmd__abort_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl abort commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__analyze_commands] )) ||
_shardctl__subcmd__analyze_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl analyze commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__backup_commands] )) ||
_shardctl__subcmd__backup_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl backup commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__change-master_commands] )) ||
_shardctl__subcmd__change-master_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl change-master commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__completions_commands] )) ||
_shardctl__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl completions commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__config_commands] )) ||
_shardctl__subcmd__config_commands() {
    local commands; commands=(
'check:Parse the inventory and connect to every node (read-only; nothing else is done); with the directory on a cluster, ask each member its state (exit 3 for a member of another cluster or with wsrep off, 5 for one not Synced in the Primary component)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl config commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__config__subcmd__check_commands] )) ||
_shardctl__subcmd__config__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl config check commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__config__subcmd__help_commands] )) ||
_shardctl__subcmd__config__subcmd__help_commands() {
    local commands; commands=(
'check:Parse the inventory and connect to every node (read-only; nothing else is done); with the directory on a cluster, ask each member its state (exit 3 for a member of another cluster or with wsrep off, 5 for one not Synced in the Primary component)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl config help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__config__subcmd__help__subcmd__check_commands] )) ||
_shardctl__subcmd__config__subcmd__help__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl config help check commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__config__subcmd__help__subcmd__help_commands] )) ||
_shardctl__subcmd__config__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl config help help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__continue_commands] )) ||
_shardctl__subcmd__continue_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl continue commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__cutover_commands] )) ||
_shardctl__subcmd__cutover_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl cutover commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__drop-source_commands] )) ||
_shardctl__subcmd__drop-source_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl drop-source commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__exporter_commands] )) ||
_shardctl__subcmd__exporter_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl exporter commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__extend_commands] )) ||
_shardctl__subcmd__extend_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl extend commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__filter_commands] )) ||
_shardctl__subcmd__filter_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl filter commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__finalize_commands] )) ||
_shardctl__subcmd__finalize_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl finalize commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__flip_commands] )) ||
_shardctl__subcmd__flip_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl flip commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__function_commands] )) ||
_shardctl__subcmd__function_commands() {
    local commands; commands=(
'add:Add a partition function' \
'list:List partition functions' \
'remove:Remove a partition function that has no shard and maps no table' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl function commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__function__subcmd__add_commands] )) ||
_shardctl__subcmd__function__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl function add commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__function__subcmd__help_commands] )) ||
_shardctl__subcmd__function__subcmd__help_commands() {
    local commands; commands=(
'add:Add a partition function' \
'list:List partition functions' \
'remove:Remove a partition function that has no shard and maps no table' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl function help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__function__subcmd__help__subcmd__add_commands] )) ||
_shardctl__subcmd__function__subcmd__help__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl function help add commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__function__subcmd__help__subcmd__help_commands] )) ||
_shardctl__subcmd__function__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl function help help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__function__subcmd__help__subcmd__list_commands] )) ||
_shardctl__subcmd__function__subcmd__help__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl function help list commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__function__subcmd__help__subcmd__remove_commands] )) ||
_shardctl__subcmd__function__subcmd__help__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl function help remove commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__function__subcmd__list_commands] )) ||
_shardctl__subcmd__function__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl function list commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__function__subcmd__remove_commands] )) ||
_shardctl__subcmd__function__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl function remove commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__global_commands] )) ||
_shardctl__subcmd__global_commands() {
    local commands; commands=(
'check:Compare every global table (or one) on every shard with its source of truth\: checksums, then the differing keys (exit 5 when a copy differs or is missing)' \
'source:Record the shard holding a global table'\''s source of truth' \
'sync:Bring every copy back to the source of truth in chunks, then verify by checksum' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl global commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__global__subcmd__check_commands] )) ||
_shardctl__subcmd__global__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl global check commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__global__subcmd__help_commands] )) ||
_shardctl__subcmd__global__subcmd__help_commands() {
    local commands; commands=(
'check:Compare every global table (or one) on every shard with its source of truth\: checksums, then the differing keys (exit 5 when a copy differs or is missing)' \
'source:Record the shard holding a global table'\''s source of truth' \
'sync:Bring every copy back to the source of truth in chunks, then verify by checksum' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl global help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__global__subcmd__help__subcmd__check_commands] )) ||
_shardctl__subcmd__global__subcmd__help__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl global help check commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__global__subcmd__help__subcmd__help_commands] )) ||
_shardctl__subcmd__global__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl global help help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__global__subcmd__help__subcmd__source_commands] )) ||
_shardctl__subcmd__global__subcmd__help__subcmd__source_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl global help source commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__global__subcmd__help__subcmd__sync_commands] )) ||
_shardctl__subcmd__global__subcmd__help__subcmd__sync_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl global help sync commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__global__subcmd__source_commands] )) ||
_shardctl__subcmd__global__subcmd__source_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl global source commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__global__subcmd__sync_commands] )) ||
_shardctl__subcmd__global__subcmd__sync_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl global sync commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help_commands] )) ||
_shardctl__subcmd__help_commands() {
    local commands; commands=(
'sandbox:Local sandboxes of real MariaDB/MySQL servers for demos and tests' \
'init:Create or migrate the sharding directory on the directory node (idempotent)' \
'node:Nodes registered in the directory' \
'function:Partition functions (range, hash, list, per-key)' \
'table:Sharded and global tables' \
'shard:Shards\: add one (creating its schemas), list them' \
'lookup:Which shard, node and schemas hold a key' \
'keys:The keys of per-key functions\: assign a new key to the least-loaded open shard, import keys in bulk' \
'analyze:Candidate sharding indexes of a schema, from its foreign keys' \
'sample:Write generated employees-shaped rows (the chapter'\''s example) through the router' \
'move:Move a shard to another node (playbooks/move.yaml)\: copy, replicate, fence, verify, flip, drop the old copy' \
'split:Split a shard (playbooks/split.yaml)\: a new shard on NODE takes part of the key space; both sides then prune what they no longer own' \
'move-keys:Move some of a shard'\''s keys, with their rows, to another existing shard (playbooks/move-keys.yaml)\: copied, kept current by a change stream from the donor'\''s binary log, only those keys fenced for the cut-over, flipped, pruned from the donor' \
'merge:Merge adjacent shards (playbooks/merge.yaml) into the one on NODE\: each other shard is copied into it (kept current by a channel from another node), fenced, verified, flipped and dropped' \
'rebalance:Plan the moves that even out the fleet, then apply them' \
'resume:Continue an operation after a crash or a failure, from what the servers show' \
'abort:Roll back an operation that has not flipped\: fence lifted, channel removed, copy dropped' \
'cutover:Give an operation waiting in its await-cutover step (\`move --cutover manual\`) the go-ahead\: it fences, confirms and flips' \
'revert:Flip a move waiting in its revert window (\`move --revert-window\`) back to its old node\: fence on the new node, old copy caught up and compared, directory back' \
'finalize:Close a move'\''s revert window now\: the reverse channel removed, the old copy dropped' \
'extend:Keep a move'\''s revert window open longer\: its end moves by DURATION, or to TIME' \
'stop:Ask the process driving an operation to stop at its next safe point, as Ctrl-C would' \
'pause:Pause a running copy, catch-up or prune at its next safe point outside any fence; it holds no fence and no lock while paused' \
'continue:Let a paused operation go on' \
'throttle:Change the limits of a running operation; its process picks them up within a second' \
'ops:Operations in the journal, or one with its steps' \
'workload:Write through the router at a steady rate, one thread and connection per shard'\''s key stream, retrying as the chapter'\''s application does; report acknowledged writes, each stream'\''s longest pause, any write lost and any written to a shard not owning its key' \
'prune:Delete the rows a shard no longer owns, in throttled, checkpointed primary-key chunks' \
'backup:Copy a shard'\''s schemas into a node (or dump them to a directory) with the binlog coordinates the copy matches' \
'filter:Limit a channel to some schemas (wild-do-table \`schema.%\`), dynamically' \
'change-master:Point a channel on a node at another node'\''s binary log, then start it' \
'wait:Wait until a channel reached a position or its lag is low enough' \
'lock:Raise the write fence on a shard'\''s node (journaled; \`unlock\` lifts it)' \
'unlock:Lift the fence \`lock\` raised' \
'flip:Point the directory at the target of a move that verified it' \
'drop-source:Drop a shard'\''s old copy from a node the directory no longer points at' \
'status:The fleet at a glance\: nodes, versions, binary logs, replication channels, shards' \
'config:The inventory\: \`config check\` parses it and connects to every node' \
'simulate:What going from N to M nodes (or a split or move of the directory) would cost under each placement scheme\: keys and bytes that change node, balance before and after' \
'ids:Ids unique across shards\: \`ids check\` finds ids on more than one shard and the scheme the fleet follows; \`ids sequence\` keeps sequences in the directory handing out blocks' \
'global:Global tables kept identical on every shard\: check, record the source, sync' \
'query:Run one SELECT on every shard of a function in parallel (read-only, per-shard timeout), \`{table}\` replaced by each shard'\''s table; rows merged, COUNT/SUM/MIN/MAX merged by GROUP BY key' \
'exporter:Serve the fleet'\''s metrics to Prometheus on HTTP (\`/metrics\`)\: nodes, channels, shards, running operations, the directory, finished operations and fence durations (docs/METRICS.md). Read-only; every scrape within its budget, whatever is down' \
'reporting:A reporting server replicating every shard'\''s schemas, kept current across moves, splits and merges\: attach, status, sync, detach' \
'completions:Print a shell completion script (bash, zsh, fish, elvish, powershell)' \
'man:Print the man page (roff)\: shardctl'\''s, or one command'\''s' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__abort_commands] )) ||
_shardctl__subcmd__help__subcmd__abort_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help abort commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__analyze_commands] )) ||
_shardctl__subcmd__help__subcmd__analyze_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help analyze commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__backup_commands] )) ||
_shardctl__subcmd__help__subcmd__backup_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help backup commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__change-master_commands] )) ||
_shardctl__subcmd__help__subcmd__change-master_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help change-master commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__completions_commands] )) ||
_shardctl__subcmd__help__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help completions commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__config_commands] )) ||
_shardctl__subcmd__help__subcmd__config_commands() {
    local commands; commands=(
'check:Parse the inventory and connect to every node (read-only; nothing else is done); with the directory on a cluster, ask each member its state (exit 3 for a member of another cluster or with wsrep off, 5 for one not Synced in the Primary component)' \
    )
    _describe -t commands 'shardctl help config commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__config__subcmd__check_commands] )) ||
_shardctl__subcmd__help__subcmd__config__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help config check commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__continue_commands] )) ||
_shardctl__subcmd__help__subcmd__continue_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help continue commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__cutover_commands] )) ||
_shardctl__subcmd__help__subcmd__cutover_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help cutover commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__drop-source_commands] )) ||
_shardctl__subcmd__help__subcmd__drop-source_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help drop-source commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__exporter_commands] )) ||
_shardctl__subcmd__help__subcmd__exporter_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help exporter commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__extend_commands] )) ||
_shardctl__subcmd__help__subcmd__extend_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help extend commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__filter_commands] )) ||
_shardctl__subcmd__help__subcmd__filter_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help filter commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__finalize_commands] )) ||
_shardctl__subcmd__help__subcmd__finalize_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help finalize commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__flip_commands] )) ||
_shardctl__subcmd__help__subcmd__flip_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help flip commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__function_commands] )) ||
_shardctl__subcmd__help__subcmd__function_commands() {
    local commands; commands=(
'add:Add a partition function' \
'list:List partition functions' \
'remove:Remove a partition function that has no shard and maps no table' \
    )
    _describe -t commands 'shardctl help function commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__function__subcmd__add_commands] )) ||
_shardctl__subcmd__help__subcmd__function__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help function add commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__function__subcmd__list_commands] )) ||
_shardctl__subcmd__help__subcmd__function__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help function list commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__function__subcmd__remove_commands] )) ||
_shardctl__subcmd__help__subcmd__function__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help function remove commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__global_commands] )) ||
_shardctl__subcmd__help__subcmd__global_commands() {
    local commands; commands=(
'check:Compare every global table (or one) on every shard with its source of truth\: checksums, then the differing keys (exit 5 when a copy differs or is missing)' \
'source:Record the shard holding a global table'\''s source of truth' \
'sync:Bring every copy back to the source of truth in chunks, then verify by checksum' \
    )
    _describe -t commands 'shardctl help global commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__global__subcmd__check_commands] )) ||
_shardctl__subcmd__help__subcmd__global__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help global check commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__global__subcmd__source_commands] )) ||
_shardctl__subcmd__help__subcmd__global__subcmd__source_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help global source commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__global__subcmd__sync_commands] )) ||
_shardctl__subcmd__help__subcmd__global__subcmd__sync_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help global sync commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__help_commands] )) ||
_shardctl__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__ids_commands] )) ||
_shardctl__subcmd__help__subcmd__ids_commands() {
    local commands; commands=(
'check:Ids present on more than one shard, each node'\''s auto_increment_increment/offset, and which scheme each sharded table follows and where it breaks (exit 5 when one breaks)' \
'sequence:Sequences in the directory that hand out blocks of ids unique across shards' \
    )
    _describe -t commands 'shardctl help ids commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__ids__subcmd__check_commands] )) ||
_shardctl__subcmd__help__subcmd__ids__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help ids check commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__ids__subcmd__sequence_commands] )) ||
_shardctl__subcmd__help__subcmd__ids__subcmd__sequence_commands() {
    local commands; commands=(
'create:Create a sequence' \
'feeds:Set the columns a sequence'\''s ids are stored in (replacing the ones it had)' \
'raise:Raise a sequence'\''s next value past the highest id stored in the columns it feeds (after a directory restored from an older backup); never lowers it' \
'next:Take values\: a block of --count (default\: the sequence'\''s block size)' \
'show:Show sequences' \
    )
    _describe -t commands 'shardctl help ids sequence commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__ids__subcmd__sequence__subcmd__create_commands] )) ||
_shardctl__subcmd__help__subcmd__ids__subcmd__sequence__subcmd__create_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help ids sequence create commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__ids__subcmd__sequence__subcmd__feeds_commands] )) ||
_shardctl__subcmd__help__subcmd__ids__subcmd__sequence__subcmd__feeds_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help ids sequence feeds commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__ids__subcmd__sequence__subcmd__next_commands] )) ||
_shardctl__subcmd__help__subcmd__ids__subcmd__sequence__subcmd__next_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help ids sequence next commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__ids__subcmd__sequence__subcmd__raise_commands] )) ||
_shardctl__subcmd__help__subcmd__ids__subcmd__sequence__subcmd__raise_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help ids sequence raise commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__ids__subcmd__sequence__subcmd__show_commands] )) ||
_shardctl__subcmd__help__subcmd__ids__subcmd__sequence__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help ids sequence show commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__init_commands] )) ||
_shardctl__subcmd__help__subcmd__init_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help init commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__keys_commands] )) ||
_shardctl__subcmd__help__subcmd__keys_commands() {
    local commands; commands=(
'assign:Map new keys of a per-key function, each to the least-loaded open shard (online, available, fewest keys); a key mapped already keeps its shard. Atomic\: two callers assigning one key at once get the same shard' \
'import:Import the key-to-shard rows of a per-key function from a file\: one \`KEY,SHARD\` (or \`KEY<TAB>SHARD\`) a line, blank lines skipped; or from the rows (key, shard) of a SELECT run on a node. Everything is checked first (a bad line or row, an unknown shard, a key given twice or mapped elsewhere already refuses the whole import, naming the line or row); keys mapped already to the same shard are skipped, so an import can run again' \
    )
    _describe -t commands 'shardctl help keys commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__keys__subcmd__assign_commands] )) ||
_shardctl__subcmd__help__subcmd__keys__subcmd__assign_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help keys assign commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__keys__subcmd__import_commands] )) ||
_shardctl__subcmd__help__subcmd__keys__subcmd__import_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help keys import commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__lock_commands] )) ||
_shardctl__subcmd__help__subcmd__lock_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help lock commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__lookup_commands] )) ||
_shardctl__subcmd__help__subcmd__lookup_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help lookup commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__man_commands] )) ||
_shardctl__subcmd__help__subcmd__man_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help man commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__merge_commands] )) ||
_shardctl__subcmd__help__subcmd__merge_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help merge commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__move_commands] )) ||
_shardctl__subcmd__help__subcmd__move_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help move commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__move-keys_commands] )) ||
_shardctl__subcmd__help__subcmd__move-keys_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help move-keys commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__node_commands] )) ||
_shardctl__subcmd__help__subcmd__node_commands() {
    local commands; commands=(
'add:Register an inventory node in the directory (the address applications use)' \
'list:List the directory'\''s nodes' \
'remove:Remove a node that holds no shard' \
    )
    _describe -t commands 'shardctl help node commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__node__subcmd__add_commands] )) ||
_shardctl__subcmd__help__subcmd__node__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help node add commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__node__subcmd__list_commands] )) ||
_shardctl__subcmd__help__subcmd__node__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help node list commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__node__subcmd__remove_commands] )) ||
_shardctl__subcmd__help__subcmd__node__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help node remove commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__ops_commands] )) ||
_shardctl__subcmd__help__subcmd__ops_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help ops commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__pause_commands] )) ||
_shardctl__subcmd__help__subcmd__pause_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help pause commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__prune_commands] )) ||
_shardctl__subcmd__help__subcmd__prune_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help prune commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__query_commands] )) ||
_shardctl__subcmd__help__subcmd__query_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help query commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__rebalance_commands] )) ||
_shardctl__subcmd__help__subcmd__rebalance_commands() {
    local commands; commands=(
'plan:Plan the moves (whole shards, or keys given to a neighbour) that even out the fleet (nothing changes)' \
'apply:Run a plan'\''s moves and key moves with concurrency limits' \
    )
    _describe -t commands 'shardctl help rebalance commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__rebalance__subcmd__apply_commands] )) ||
_shardctl__subcmd__help__subcmd__rebalance__subcmd__apply_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help rebalance apply commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__rebalance__subcmd__plan_commands] )) ||
_shardctl__subcmd__help__subcmd__rebalance__subcmd__plan_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help rebalance plan commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__reporting_commands] )) ||
_shardctl__subcmd__help__subcmd__reporting_commands() {
    local commands; commands=(
'attach:Make NODE (in the inventory, holding no shard) a reporting server\: a consistent copy of every node'\''s shard schemas, then one filtered channel per source node (\`shardctl_report_<node>\`), started. An interrupted attach is finished by \`sync\`' \
'status:Each reporting server'\''s channels (running, lag, the schemas each carries), the moves whose flip it has not followed yet (the next sync joins each at its own position) and the last \`reporting check\` of each shard' \
'sync:Bring every reporting server in line with the directory\: channels narrowed to the shards their node still holds, new shards copied and joined, a crashed attach or sync finished. Moves, splits and merges run it at their end by themselves' \
'check:Compare each reporting server'\''s copy of every shard (or one) with the shard'\''s node, chunk by chunk with the verification'\''s checksums, at consistent points of the reporting channel (its applier held at the node'\''s position for each round). Prints the differing tables and chunks; exits 5 when a copy differs or a shard'\''s schemas are not replicated. The result shows in \`reporting status\`' \
'detach:Remove NODE'\''s reporting channels and forget it; its copies stay (or go with --drop)' \
    )
    _describe -t commands 'shardctl help reporting commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__reporting__subcmd__attach_commands] )) ||
_shardctl__subcmd__help__subcmd__reporting__subcmd__attach_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help reporting attach commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__reporting__subcmd__check_commands] )) ||
_shardctl__subcmd__help__subcmd__reporting__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help reporting check commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__reporting__subcmd__detach_commands] )) ||
_shardctl__subcmd__help__subcmd__reporting__subcmd__detach_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help reporting detach commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__reporting__subcmd__status_commands] )) ||
_shardctl__subcmd__help__subcmd__reporting__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help reporting status commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__reporting__subcmd__sync_commands] )) ||
_shardctl__subcmd__help__subcmd__reporting__subcmd__sync_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help reporting sync commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__resume_commands] )) ||
_shardctl__subcmd__help__subcmd__resume_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help resume commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__revert_commands] )) ||
_shardctl__subcmd__help__subcmd__revert_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help revert commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__sample_commands] )) ||
_shardctl__subcmd__help__subcmd__sample_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help sample commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__sandbox_commands] )) ||
_shardctl__subcmd__help__subcmd__sandbox_commands() {
    local commands; commands=(
'up:Start N local servers, each with its own datadir, port, server_id and binlog, and write an inventory for them' \
'status:Show the sandbox'\''s servers and whether they run' \
'restart:Restart one server of the sandbox (a clean stop, then a start on the same data and options); the inventory'\''s \`restart_command\` of each node runs this' \
'down:Stop the servers the sandbox started; \`--purge\` also removes its data' \
    )
    _describe -t commands 'shardctl help sandbox commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__sandbox__subcmd__down_commands] )) ||
_shardctl__subcmd__help__subcmd__sandbox__subcmd__down_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help sandbox down commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__sandbox__subcmd__restart_commands] )) ||
_shardctl__subcmd__help__subcmd__sandbox__subcmd__restart_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help sandbox restart commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__sandbox__subcmd__status_commands] )) ||
_shardctl__subcmd__help__subcmd__sandbox__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help sandbox status commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__sandbox__subcmd__up_commands] )) ||
_shardctl__subcmd__help__subcmd__sandbox__subcmd__up_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help sandbox up commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__shard_commands] )) ||
_shardctl__subcmd__help__subcmd__shard_commands() {
    local commands; commands=(
'add:Add a shard to a function and create its schemas (\`<schema>_<id>\`) on a node' \
'list:List shards with what they cover' \
'set-availability:Mark a shard available, closed to writes, or closed to reads and writes (host down, maintenance)\: routers refuse what it is closed to. Journaled; refused while an operation holds the shard' \
'remove:Remove a shard that holds no rows (or never came online) and drop its schemas; its keys fall to the shards next to it' \
    )
    _describe -t commands 'shardctl help shard commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__shard__subcmd__add_commands] )) ||
_shardctl__subcmd__help__subcmd__shard__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help shard add commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__shard__subcmd__list_commands] )) ||
_shardctl__subcmd__help__subcmd__shard__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help shard list commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__shard__subcmd__remove_commands] )) ||
_shardctl__subcmd__help__subcmd__shard__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help shard remove commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__shard__subcmd__set-availability_commands] )) ||
_shardctl__subcmd__help__subcmd__shard__subcmd__set-availability_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help shard set-availability commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__simulate_commands] )) ||
_shardctl__subcmd__help__subcmd__simulate_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help simulate commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__split_commands] )) ||
_shardctl__subcmd__help__subcmd__split_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help split commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__status_commands] )) ||
_shardctl__subcmd__help__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help status commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__stop_commands] )) ||
_shardctl__subcmd__help__subcmd__stop_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help stop commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__table_commands] )) ||
_shardctl__subcmd__help__subcmd__table_commands() {
    local commands; commands=(
'add:Map a table\: sharded by a function on a column, or global (copied into every shard)' \
'list:List mapped tables' \
'remove:Unmap a table; refused for a sharded table while any shard'\''s copy holds rows' \
    )
    _describe -t commands 'shardctl help table commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__table__subcmd__add_commands] )) ||
_shardctl__subcmd__help__subcmd__table__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help table add commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__table__subcmd__list_commands] )) ||
_shardctl__subcmd__help__subcmd__table__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help table list commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__table__subcmd__remove_commands] )) ||
_shardctl__subcmd__help__subcmd__table__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help table remove commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__throttle_commands] )) ||
_shardctl__subcmd__help__subcmd__throttle_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help throttle commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__unlock_commands] )) ||
_shardctl__subcmd__help__subcmd__unlock_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help unlock commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__wait_commands] )) ||
_shardctl__subcmd__help__subcmd__wait_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help wait commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__help__subcmd__workload_commands] )) ||
_shardctl__subcmd__help__subcmd__workload_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl help workload commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids_commands] )) ||
_shardctl__subcmd__ids_commands() {
    local commands; commands=(
'check:Ids present on more than one shard, each node'\''s auto_increment_increment/offset, and which scheme each sharded table follows and where it breaks (exit 5 when one breaks)' \
'sequence:Sequences in the directory that hand out blocks of ids unique across shards' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl ids commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__check_commands] )) ||
_shardctl__subcmd__ids__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids check commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__help_commands] )) ||
_shardctl__subcmd__ids__subcmd__help_commands() {
    local commands; commands=(
'check:Ids present on more than one shard, each node'\''s auto_increment_increment/offset, and which scheme each sharded table follows and where it breaks (exit 5 when one breaks)' \
'sequence:Sequences in the directory that hand out blocks of ids unique across shards' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl ids help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__help__subcmd__check_commands] )) ||
_shardctl__subcmd__ids__subcmd__help__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids help check commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__help__subcmd__help_commands] )) ||
_shardctl__subcmd__ids__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids help help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__help__subcmd__sequence_commands] )) ||
_shardctl__subcmd__ids__subcmd__help__subcmd__sequence_commands() {
    local commands; commands=(
'create:Create a sequence' \
'feeds:Set the columns a sequence'\''s ids are stored in (replacing the ones it had)' \
'raise:Raise a sequence'\''s next value past the highest id stored in the columns it feeds (after a directory restored from an older backup); never lowers it' \
'next:Take values\: a block of --count (default\: the sequence'\''s block size)' \
'show:Show sequences' \
    )
    _describe -t commands 'shardctl ids help sequence commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__help__subcmd__sequence__subcmd__create_commands] )) ||
_shardctl__subcmd__ids__subcmd__help__subcmd__sequence__subcmd__create_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids help sequence create commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__help__subcmd__sequence__subcmd__feeds_commands] )) ||
_shardctl__subcmd__ids__subcmd__help__subcmd__sequence__subcmd__feeds_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids help sequence feeds commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__help__subcmd__sequence__subcmd__next_commands] )) ||
_shardctl__subcmd__ids__subcmd__help__subcmd__sequence__subcmd__next_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids help sequence next commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__help__subcmd__sequence__subcmd__raise_commands] )) ||
_shardctl__subcmd__ids__subcmd__help__subcmd__sequence__subcmd__raise_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids help sequence raise commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__help__subcmd__sequence__subcmd__show_commands] )) ||
_shardctl__subcmd__ids__subcmd__help__subcmd__sequence__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids help sequence show commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__sequence_commands] )) ||
_shardctl__subcmd__ids__subcmd__sequence_commands() {
    local commands; commands=(
'create:Create a sequence' \
'feeds:Set the columns a sequence'\''s ids are stored in (replacing the ones it had)' \
'raise:Raise a sequence'\''s next value past the highest id stored in the columns it feeds (after a directory restored from an older backup); never lowers it' \
'next:Take values\: a block of --count (default\: the sequence'\''s block size)' \
'show:Show sequences' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl ids sequence commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__sequence__subcmd__create_commands] )) ||
_shardctl__subcmd__ids__subcmd__sequence__subcmd__create_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids sequence create commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__sequence__subcmd__feeds_commands] )) ||
_shardctl__subcmd__ids__subcmd__sequence__subcmd__feeds_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids sequence feeds commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__sequence__subcmd__help_commands] )) ||
_shardctl__subcmd__ids__subcmd__sequence__subcmd__help_commands() {
    local commands; commands=(
'create:Create a sequence' \
'feeds:Set the columns a sequence'\''s ids are stored in (replacing the ones it had)' \
'raise:Raise a sequence'\''s next value past the highest id stored in the columns it feeds (after a directory restored from an older backup); never lowers it' \
'next:Take values\: a block of --count (default\: the sequence'\''s block size)' \
'show:Show sequences' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl ids sequence help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__sequence__subcmd__help__subcmd__create_commands] )) ||
_shardctl__subcmd__ids__subcmd__sequence__subcmd__help__subcmd__create_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids sequence help create commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__sequence__subcmd__help__subcmd__feeds_commands] )) ||
_shardctl__subcmd__ids__subcmd__sequence__subcmd__help__subcmd__feeds_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids sequence help feeds commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__sequence__subcmd__help__subcmd__help_commands] )) ||
_shardctl__subcmd__ids__subcmd__sequence__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids sequence help help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__sequence__subcmd__help__subcmd__next_commands] )) ||
_shardctl__subcmd__ids__subcmd__sequence__subcmd__help__subcmd__next_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids sequence help next commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__sequence__subcmd__help__subcmd__raise_commands] )) ||
_shardctl__subcmd__ids__subcmd__sequence__subcmd__help__subcmd__raise_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids sequence help raise commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__sequence__subcmd__help__subcmd__show_commands] )) ||
_shardctl__subcmd__ids__subcmd__sequence__subcmd__help__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids sequence help show commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__sequence__subcmd__next_commands] )) ||
_shardctl__subcmd__ids__subcmd__sequence__subcmd__next_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids sequence next commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__sequence__subcmd__raise_commands] )) ||
_shardctl__subcmd__ids__subcmd__sequence__subcmd__raise_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids sequence raise commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ids__subcmd__sequence__subcmd__show_commands] )) ||
_shardctl__subcmd__ids__subcmd__sequence__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ids sequence show commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__init_commands] )) ||
_shardctl__subcmd__init_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl init commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__keys_commands] )) ||
_shardctl__subcmd__keys_commands() {
    local commands; commands=(
'assign:Map new keys of a per-key function, each to the least-loaded open shard (online, available, fewest keys); a key mapped already keeps its shard. Atomic\: two callers assigning one key at once get the same shard' \
'import:Import the key-to-shard rows of a per-key function from a file\: one \`KEY,SHARD\` (or \`KEY<TAB>SHARD\`) a line, blank lines skipped; or from the rows (key, shard) of a SELECT run on a node. Everything is checked first (a bad line or row, an unknown shard, a key given twice or mapped elsewhere already refuses the whole import, naming the line or row); keys mapped already to the same shard are skipped, so an import can run again' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl keys commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__keys__subcmd__assign_commands] )) ||
_shardctl__subcmd__keys__subcmd__assign_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl keys assign commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__keys__subcmd__help_commands] )) ||
_shardctl__subcmd__keys__subcmd__help_commands() {
    local commands; commands=(
'assign:Map new keys of a per-key function, each to the least-loaded open shard (online, available, fewest keys); a key mapped already keeps its shard. Atomic\: two callers assigning one key at once get the same shard' \
'import:Import the key-to-shard rows of a per-key function from a file\: one \`KEY,SHARD\` (or \`KEY<TAB>SHARD\`) a line, blank lines skipped; or from the rows (key, shard) of a SELECT run on a node. Everything is checked first (a bad line or row, an unknown shard, a key given twice or mapped elsewhere already refuses the whole import, naming the line or row); keys mapped already to the same shard are skipped, so an import can run again' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl keys help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__keys__subcmd__help__subcmd__assign_commands] )) ||
_shardctl__subcmd__keys__subcmd__help__subcmd__assign_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl keys help assign commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__keys__subcmd__help__subcmd__help_commands] )) ||
_shardctl__subcmd__keys__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl keys help help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__keys__subcmd__help__subcmd__import_commands] )) ||
_shardctl__subcmd__keys__subcmd__help__subcmd__import_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl keys help import commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__keys__subcmd__import_commands] )) ||
_shardctl__subcmd__keys__subcmd__import_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl keys import commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__lock_commands] )) ||
_shardctl__subcmd__lock_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl lock commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__lookup_commands] )) ||
_shardctl__subcmd__lookup_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl lookup commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__man_commands] )) ||
_shardctl__subcmd__man_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl man commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__merge_commands] )) ||
_shardctl__subcmd__merge_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl merge commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__move_commands] )) ||
_shardctl__subcmd__move_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl move commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__move-keys_commands] )) ||
_shardctl__subcmd__move-keys_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl move-keys commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__node_commands] )) ||
_shardctl__subcmd__node_commands() {
    local commands; commands=(
'add:Register an inventory node in the directory (the address applications use)' \
'list:List the directory'\''s nodes' \
'remove:Remove a node that holds no shard' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl node commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__node__subcmd__add_commands] )) ||
_shardctl__subcmd__node__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl node add commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__node__subcmd__help_commands] )) ||
_shardctl__subcmd__node__subcmd__help_commands() {
    local commands; commands=(
'add:Register an inventory node in the directory (the address applications use)' \
'list:List the directory'\''s nodes' \
'remove:Remove a node that holds no shard' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl node help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__node__subcmd__help__subcmd__add_commands] )) ||
_shardctl__subcmd__node__subcmd__help__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl node help add commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__node__subcmd__help__subcmd__help_commands] )) ||
_shardctl__subcmd__node__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl node help help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__node__subcmd__help__subcmd__list_commands] )) ||
_shardctl__subcmd__node__subcmd__help__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl node help list commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__node__subcmd__help__subcmd__remove_commands] )) ||
_shardctl__subcmd__node__subcmd__help__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl node help remove commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__node__subcmd__list_commands] )) ||
_shardctl__subcmd__node__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl node list commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__node__subcmd__remove_commands] )) ||
_shardctl__subcmd__node__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl node remove commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__ops_commands] )) ||
_shardctl__subcmd__ops_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl ops commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__pause_commands] )) ||
_shardctl__subcmd__pause_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl pause commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__prune_commands] )) ||
_shardctl__subcmd__prune_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl prune commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__query_commands] )) ||
_shardctl__subcmd__query_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl query commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__rebalance_commands] )) ||
_shardctl__subcmd__rebalance_commands() {
    local commands; commands=(
'plan:Plan the moves (whole shards, or keys given to a neighbour) that even out the fleet (nothing changes)' \
'apply:Run a plan'\''s moves and key moves with concurrency limits' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl rebalance commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__rebalance__subcmd__apply_commands] )) ||
_shardctl__subcmd__rebalance__subcmd__apply_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl rebalance apply commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__rebalance__subcmd__help_commands] )) ||
_shardctl__subcmd__rebalance__subcmd__help_commands() {
    local commands; commands=(
'plan:Plan the moves (whole shards, or keys given to a neighbour) that even out the fleet (nothing changes)' \
'apply:Run a plan'\''s moves and key moves with concurrency limits' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl rebalance help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__rebalance__subcmd__help__subcmd__apply_commands] )) ||
_shardctl__subcmd__rebalance__subcmd__help__subcmd__apply_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl rebalance help apply commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__rebalance__subcmd__help__subcmd__help_commands] )) ||
_shardctl__subcmd__rebalance__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl rebalance help help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__rebalance__subcmd__help__subcmd__plan_commands] )) ||
_shardctl__subcmd__rebalance__subcmd__help__subcmd__plan_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl rebalance help plan commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__rebalance__subcmd__plan_commands] )) ||
_shardctl__subcmd__rebalance__subcmd__plan_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl rebalance plan commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__reporting_commands] )) ||
_shardctl__subcmd__reporting_commands() {
    local commands; commands=(
'attach:Make NODE (in the inventory, holding no shard) a reporting server\: a consistent copy of every node'\''s shard schemas, then one filtered channel per source node (\`shardctl_report_<node>\`), started. An interrupted attach is finished by \`sync\`' \
'status:Each reporting server'\''s channels (running, lag, the schemas each carries), the moves whose flip it has not followed yet (the next sync joins each at its own position) and the last \`reporting check\` of each shard' \
'sync:Bring every reporting server in line with the directory\: channels narrowed to the shards their node still holds, new shards copied and joined, a crashed attach or sync finished. Moves, splits and merges run it at their end by themselves' \
'check:Compare each reporting server'\''s copy of every shard (or one) with the shard'\''s node, chunk by chunk with the verification'\''s checksums, at consistent points of the reporting channel (its applier held at the node'\''s position for each round). Prints the differing tables and chunks; exits 5 when a copy differs or a shard'\''s schemas are not replicated. The result shows in \`reporting status\`' \
'detach:Remove NODE'\''s reporting channels and forget it; its copies stay (or go with --drop)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl reporting commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__reporting__subcmd__attach_commands] )) ||
_shardctl__subcmd__reporting__subcmd__attach_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl reporting attach commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__reporting__subcmd__check_commands] )) ||
_shardctl__subcmd__reporting__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl reporting check commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__reporting__subcmd__detach_commands] )) ||
_shardctl__subcmd__reporting__subcmd__detach_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl reporting detach commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__reporting__subcmd__help_commands] )) ||
_shardctl__subcmd__reporting__subcmd__help_commands() {
    local commands; commands=(
'attach:Make NODE (in the inventory, holding no shard) a reporting server\: a consistent copy of every node'\''s shard schemas, then one filtered channel per source node (\`shardctl_report_<node>\`), started. An interrupted attach is finished by \`sync\`' \
'status:Each reporting server'\''s channels (running, lag, the schemas each carries), the moves whose flip it has not followed yet (the next sync joins each at its own position) and the last \`reporting check\` of each shard' \
'sync:Bring every reporting server in line with the directory\: channels narrowed to the shards their node still holds, new shards copied and joined, a crashed attach or sync finished. Moves, splits and merges run it at their end by themselves' \
'check:Compare each reporting server'\''s copy of every shard (or one) with the shard'\''s node, chunk by chunk with the verification'\''s checksums, at consistent points of the reporting channel (its applier held at the node'\''s position for each round). Prints the differing tables and chunks; exits 5 when a copy differs or a shard'\''s schemas are not replicated. The result shows in \`reporting status\`' \
'detach:Remove NODE'\''s reporting channels and forget it; its copies stay (or go with --drop)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl reporting help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__reporting__subcmd__help__subcmd__attach_commands] )) ||
_shardctl__subcmd__reporting__subcmd__help__subcmd__attach_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl reporting help attach commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__reporting__subcmd__help__subcmd__check_commands] )) ||
_shardctl__subcmd__reporting__subcmd__help__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl reporting help check commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__reporting__subcmd__help__subcmd__detach_commands] )) ||
_shardctl__subcmd__reporting__subcmd__help__subcmd__detach_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl reporting help detach commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__reporting__subcmd__help__subcmd__help_commands] )) ||
_shardctl__subcmd__reporting__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl reporting help help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__reporting__subcmd__help__subcmd__status_commands] )) ||
_shardctl__subcmd__reporting__subcmd__help__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl reporting help status commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__reporting__subcmd__help__subcmd__sync_commands] )) ||
_shardctl__subcmd__reporting__subcmd__help__subcmd__sync_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl reporting help sync commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__reporting__subcmd__status_commands] )) ||
_shardctl__subcmd__reporting__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl reporting status commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__reporting__subcmd__sync_commands] )) ||
_shardctl__subcmd__reporting__subcmd__sync_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl reporting sync commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__resume_commands] )) ||
_shardctl__subcmd__resume_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl resume commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__revert_commands] )) ||
_shardctl__subcmd__revert_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl revert commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__sample_commands] )) ||
_shardctl__subcmd__sample_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl sample commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__sandbox_commands] )) ||
_shardctl__subcmd__sandbox_commands() {
    local commands; commands=(
'up:Start N local servers, each with its own datadir, port, server_id and binlog, and write an inventory for them' \
'status:Show the sandbox'\''s servers and whether they run' \
'restart:Restart one server of the sandbox (a clean stop, then a start on the same data and options); the inventory'\''s \`restart_command\` of each node runs this' \
'down:Stop the servers the sandbox started; \`--purge\` also removes its data' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl sandbox commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__sandbox__subcmd__down_commands] )) ||
_shardctl__subcmd__sandbox__subcmd__down_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl sandbox down commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__sandbox__subcmd__help_commands] )) ||
_shardctl__subcmd__sandbox__subcmd__help_commands() {
    local commands; commands=(
'up:Start N local servers, each with its own datadir, port, server_id and binlog, and write an inventory for them' \
'status:Show the sandbox'\''s servers and whether they run' \
'restart:Restart one server of the sandbox (a clean stop, then a start on the same data and options); the inventory'\''s \`restart_command\` of each node runs this' \
'down:Stop the servers the sandbox started; \`--purge\` also removes its data' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl sandbox help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__sandbox__subcmd__help__subcmd__down_commands] )) ||
_shardctl__subcmd__sandbox__subcmd__help__subcmd__down_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl sandbox help down commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__sandbox__subcmd__help__subcmd__help_commands] )) ||
_shardctl__subcmd__sandbox__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl sandbox help help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__sandbox__subcmd__help__subcmd__restart_commands] )) ||
_shardctl__subcmd__sandbox__subcmd__help__subcmd__restart_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl sandbox help restart commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__sandbox__subcmd__help__subcmd__status_commands] )) ||
_shardctl__subcmd__sandbox__subcmd__help__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl sandbox help status commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__sandbox__subcmd__help__subcmd__up_commands] )) ||
_shardctl__subcmd__sandbox__subcmd__help__subcmd__up_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl sandbox help up commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__sandbox__subcmd__restart_commands] )) ||
_shardctl__subcmd__sandbox__subcmd__restart_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl sandbox restart commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__sandbox__subcmd__status_commands] )) ||
_shardctl__subcmd__sandbox__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl sandbox status commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__sandbox__subcmd__up_commands] )) ||
_shardctl__subcmd__sandbox__subcmd__up_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl sandbox up commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__shard_commands] )) ||
_shardctl__subcmd__shard_commands() {
    local commands; commands=(
'add:Add a shard to a function and create its schemas (\`<schema>_<id>\`) on a node' \
'list:List shards with what they cover' \
'set-availability:Mark a shard available, closed to writes, or closed to reads and writes (host down, maintenance)\: routers refuse what it is closed to. Journaled; refused while an operation holds the shard' \
'remove:Remove a shard that holds no rows (or never came online) and drop its schemas; its keys fall to the shards next to it' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl shard commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__shard__subcmd__add_commands] )) ||
_shardctl__subcmd__shard__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl shard add commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__shard__subcmd__help_commands] )) ||
_shardctl__subcmd__shard__subcmd__help_commands() {
    local commands; commands=(
'add:Add a shard to a function and create its schemas (\`<schema>_<id>\`) on a node' \
'list:List shards with what they cover' \
'set-availability:Mark a shard available, closed to writes, or closed to reads and writes (host down, maintenance)\: routers refuse what it is closed to. Journaled; refused while an operation holds the shard' \
'remove:Remove a shard that holds no rows (or never came online) and drop its schemas; its keys fall to the shards next to it' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl shard help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__shard__subcmd__help__subcmd__add_commands] )) ||
_shardctl__subcmd__shard__subcmd__help__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl shard help add commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__shard__subcmd__help__subcmd__help_commands] )) ||
_shardctl__subcmd__shard__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl shard help help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__shard__subcmd__help__subcmd__list_commands] )) ||
_shardctl__subcmd__shard__subcmd__help__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl shard help list commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__shard__subcmd__help__subcmd__remove_commands] )) ||
_shardctl__subcmd__shard__subcmd__help__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl shard help remove commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__shard__subcmd__help__subcmd__set-availability_commands] )) ||
_shardctl__subcmd__shard__subcmd__help__subcmd__set-availability_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl shard help set-availability commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__shard__subcmd__list_commands] )) ||
_shardctl__subcmd__shard__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl shard list commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__shard__subcmd__remove_commands] )) ||
_shardctl__subcmd__shard__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl shard remove commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__shard__subcmd__set-availability_commands] )) ||
_shardctl__subcmd__shard__subcmd__set-availability_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl shard set-availability commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__simulate_commands] )) ||
_shardctl__subcmd__simulate_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl simulate commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__split_commands] )) ||
_shardctl__subcmd__split_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl split commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__status_commands] )) ||
_shardctl__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl status commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__stop_commands] )) ||
_shardctl__subcmd__stop_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl stop commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__table_commands] )) ||
_shardctl__subcmd__table_commands() {
    local commands; commands=(
'add:Map a table\: sharded by a function on a column, or global (copied into every shard)' \
'list:List mapped tables' \
'remove:Unmap a table; refused for a sharded table while any shard'\''s copy holds rows' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl table commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__table__subcmd__add_commands] )) ||
_shardctl__subcmd__table__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl table add commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__table__subcmd__help_commands] )) ||
_shardctl__subcmd__table__subcmd__help_commands() {
    local commands; commands=(
'add:Map a table\: sharded by a function on a column, or global (copied into every shard)' \
'list:List mapped tables' \
'remove:Unmap a table; refused for a sharded table while any shard'\''s copy holds rows' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'shardctl table help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__table__subcmd__help__subcmd__add_commands] )) ||
_shardctl__subcmd__table__subcmd__help__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl table help add commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__table__subcmd__help__subcmd__help_commands] )) ||
_shardctl__subcmd__table__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl table help help commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__table__subcmd__help__subcmd__list_commands] )) ||
_shardctl__subcmd__table__subcmd__help__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl table help list commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__table__subcmd__help__subcmd__remove_commands] )) ||
_shardctl__subcmd__table__subcmd__help__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl table help remove commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__table__subcmd__list_commands] )) ||
_shardctl__subcmd__table__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl table list commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__table__subcmd__remove_commands] )) ||
_shardctl__subcmd__table__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl table remove commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__throttle_commands] )) ||
_shardctl__subcmd__throttle_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl throttle commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__unlock_commands] )) ||
_shardctl__subcmd__unlock_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl unlock commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__wait_commands] )) ||
_shardctl__subcmd__wait_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl wait commands' commands "$@"
}
(( $+functions[_shardctl__subcmd__workload_commands] )) ||
_shardctl__subcmd__workload_commands() {
    local commands; commands=()
    _describe -t commands 'shardctl workload commands' commands "$@"
}

if [ "$funcstack[1]" = "_shardctl" ]; then
    _shardctl "$@"
else
    compdef _shardctl shardctl
fi
