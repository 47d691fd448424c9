# bash completion for toolgate: its commands, their subcommands and options,
# the values of the options that take a choice, files and directories where
# an option or an operand names one, and the pending tickets' ids for
# `approvals show|approve|reject|cancel` once --state DIR or --store URL is
# on the line.
#
# Installed by `make install` as $(BASHCOMPDIR)/toolgate, where
# bash-completion loads it on the first <Tab> after `toolgate`; or source it.
# It needs nothing of bash-completion's. The options are each command's
# --help (docs/CLI.md); tests/install/run.sh checks that they are the same.

# _toolgate_opts COMMAND: the options of COMMAND (of all its subcommands).
_toolgate_opts()
{
	case $1 in
	run)
		echo --tier --memory --cpus --pids --timeout --ro --rw --workdir --env \
			--output-limit --tmpfs-size --cgroup-parent --host-uid --allow-host --json ;;
	doctor) echo --json ;;
	schema) echo --draft7 --format-assert --remotes ;;
	catalog) echo --secret-key --password-file --trust --public-key ;;
	serve)
		echo --catalog --stdio --http --tokens --tls-cert --tls-key --public-url \
			--trust-proxy --no-console --header-timeout --workspace --principal --audit \
			--state-key --policy --state --warm --otlp --descriptions --anomalies \
			--max-runs --max-runs-per-principal --record --log-format --log-level --skills \
			--skills-trust --skills-rules --skills-mode --catalog-trust --redact-gitleaks \
			--store --replica ;;
	token) echo --state --store --policy --principal --scope --ttl --audience ;;
	policy) echo --catalog ;;
	approvals)
		echo --status --all --tool --json --state --store --catalog --full --policy \
			--token-file --token --public-url --reason --audit --record ;;
	rollback)
		echo --catalog --state --store --policy --token-file --token --public-url \
			--workspace --audit --dry-run --record --catalog-trust ;;
	audit)
		echo --state --expect --store --replica -n -f --principal --tool --outcome --kind \
			--since --until ;;
	redact) echo --json --rules --gitleaks ;;
	anomalies) echo --catalog --policy --state --store --json ;;
	upstream)
		echo --catalog --state --store --timeout --as --policy --token --audit \
			--token-file --public-url --catalog-trust ;;
	skill)
		echo --secret-key --public-key --password-file --no-password --trust --expires \
			--reason --sarif --threshold --rules --json --skills ;;
	config) echo --config ;;
	esac
}

# _toolgate_verbs COMMAND: its subcommands, if it has any.
_toolgate_verbs()
{
	case $1 in
	schema) echo validate test ;;
	catalog) echo list show lint diff manifest sign verify ;;
	token) echo issue verify revoke ;;
	policy) echo lint ;;
	approvals) echo list show approve reject cancel ;;
	rollback) echo list ;;
	audit) echo verify tail query ;;
	upstream) echo list show test pin diff accept ;;
	skill) echo check manifest keygen sign verify scan rules install remove list show trust ;;
	config) echo show keys ;;
	esac
}

# _toolgate_ids STATE-DIR [STORE-URL]: the pending tickets' ids, as
# `approvals list` gives them (from the store at the URL, when given);
# nothing when the directory or the database does not answer.
_toolgate_ids()
{
	"${COMP_WORDS[0]}" approvals list --json ${1:+--state "$1"} ${2:+--store "$2"} 2>/dev/null |
		grep -o '"id": *"[0-9a-f]\{32\}"' | sed 's/.*"\([0-9a-f]*\)"$/\1/'
}

# _toolgate_paths -f|-d: files (and directories) or directories alone,
# which readline then shows as it shows paths (a slash after a directory).
_toolgate_paths()
{
	compopt -o filenames 2>/dev/null
	COMPREPLY=($(compgen "$1" -- "$cur"))
}

_toolgate()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local cword=$COMP_CWORD cmd="" verb="" state="" store="" i w
	COMPREPLY=()

	# --opt=value: bash breaks the word at '=' (COMP_WORDBREAKS)
	if [[ $cur == = ]]; then
		cur=""
	elif [[ $prev == = && $cword -ge 2 ]]; then
		prev=${COMP_WORDS[cword - 2]}
	fi

	# the command, its subcommand, and --state's and --store's values, from
	# the words before
	for ((i = 1; i < cword; i++)); do
		w=${COMP_WORDS[i]}
		if [[ -z $cmd ]]; then
			[[ $w == -* ]] || cmd=$w
		elif [[ $cmd == run && $w == -- ]]; then
			# after `run ... --`: a command and its arguments
			if ((i == cword - 1)); then
				COMPREPLY=($(compgen -c -- "$cur" | sort -u))
			else
				_toolgate_paths -f
			fi
			return
		elif [[ -z $verb && $w != -* && -n $(_toolgate_verbs "$cmd") &&
			" $(_toolgate_verbs "$cmd") " == *" $w "* ]]; then
			verb=$w
		elif [[ $w == --state && $((i + 1)) -lt $cword ]]; then
			state=${COMP_WORDS[i + 1]}
		elif [[ $w == --store && $((i + 1)) -lt $cword ]]; then
			store=${COMP_WORDS[i + 1]}
		fi
	done

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--help --version" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "run doctor schema catalog serve token policy approvals
				rollback audit redact anomalies upstream skill config help" -- "$cur"))
		fi
		return
	fi

	# an option's value
	case $prev in
	--catalog | --state | --workspace | --remotes | --cgroup-parent | --skills)
		_toolgate_paths -d
		return ;;
	--policy | --tokens | --tls-cert | --tls-key | --audit | --state-key | --token-file | \
		--ro | --rw | --record | --config | --secret-key | --public-key | --password-file | \
		--trust | --skills-trust | --skills-rules | --catalog-trust)
		_toolgate_paths -f
		return ;;
	--tier)
		COMPREPLY=($(compgen -W "strict standard" -- "$cur"))
		return ;;
	--descriptions)
		COMPREPLY=($(compgen -W "refuse warn off" -- "$cur"))
		return ;;
	--anomalies)
		COMPREPLY=($(compgen -W "hold warn off" -- "$cur"))
		return ;;
	--log-format)
		COMPREPLY=($(compgen -W "text json" -- "$cur"))
		return ;;
	--log-level)
		COMPREPLY=($(compgen -W "error warning info debug" -- "$cur"))
		return ;;
	--threshold)
		COMPREPLY=($(compgen -W "low medium high critical" -- "$cur"))
		return ;;
	--skills-mode)
		COMPREPLY=($(compgen -W "enforce warn" -- "$cur"))
		return ;;
	--status)
		COMPREPLY=($(compgen -W "pending approved rejected expired cancelled executed
			failed compensated all" -- "$cur"))
		return ;;
	--memory | --cpus | --pids | --timeout | --workdir | --env | --output-limit | \
		--tmpfs-size | --host-uid | --allow-host | --http | --public-url | --trust-proxy | \
		--header-timeout | --principal | --warm | --otlp | --max-runs | \
		--max-runs-per-principal | --scope | --ttl | --audience | --tool | --reason | \
		--token | --expect | -n | --kind | --outcome | --since | --until | --as | --expires | \
		--store)
		return ;;
	esac

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_toolgate_opts "$cmd") --help" -- "$cur"))
		[[ $cmd == run ]] && COMPREPLY+=($(compgen -W "--" -- "$cur"))
		return
	fi
	if [[ -z $verb && -n $(_toolgate_verbs "$cmd") ]]; then
		COMPREPLY=($(compgen -W "$(_toolgate_verbs "$cmd")" -- "$cur"))
		# rollback's operand is a call's id, not a subcommand
		[[ $cmd == rollback ]] && return
		[[ ${#COMPREPLY[@]} -gt 0 ]] && return
	fi
	case $cmd/$verb in
	approvals/show | approvals/approve | approvals/reject | approvals/cancel)
		[[ -n $state || -n $store ]] &&
			COMPREPLY=($(compgen -W "$(_toolgate_ids "$state" "$store")" -- "$cur"))
		return ;;
	catalog/list | catalog/lint | catalog/show | catalog/manifest | catalog/sign | \
		catalog/verify | skill/check | skill/manifest | skill/sign | skill/verify | skill/scan | \
		skill/install | skill/show)
		_toolgate_paths -d
		return ;;
	doctor/ | serve/ | run/ | token/* | upstream/* | rollback/*)
		return ;;
	esac
	_toolgate_paths -f
}
complete -F _toolgate toolgate
