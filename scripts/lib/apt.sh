# shellcheck shell=bash
# How the scripts install the Debian packages they need, in one place: sourced (not run) by
# .ci/run, scripts/test, scripts/test-clients, scripts/install-postgres and
# clients/typescript/test.sh, so that they all install the same way:
#   - only the packages not installed yet;
#   - non-interactively, with standard input closed: CI runs with no TTY and must never wait;
#   - without recommended packages;
#   - with sudo when not root;
#   - after one `apt-get update` per run at most: the first install of a run updates the package
#     lists and exports APT_UPDATED=1, which tells later installs of the same script, and the
#     scripts it starts, that the lists are fresh (set APT_UPDATED=1 to skip the update).
#
#   apt_install PACKAGE...   installs the packages among these that are missing; without apt-get
#                            here, says which packages the calling script needs and fails.
#   as_root COMMAND...       runs a command as root: directly when root, else through sudo.

as_root() {
    if [[ "$(id -u)" == 0 ]]; then
        "$@"
    else
        sudo "$@"
    fi
}

apt_install() {
    local package missing=()
    for package in "$@"; do
        [[ "$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null)" == installed ]] ||
            missing+=("$package")
    done
    ((${#missing[@]})) || return 0
    if ! command -v apt-get >/dev/null; then
        echo "${0##*/} needs the Debian packages ${missing[*]}, and there is no apt-get here:" \
            "install them (or their equivalents) with the system's package manager" >&2
        return 1
    fi
    if [[ "${APT_UPDATED:-0}" != 1 ]]; then
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null
        export APT_UPDATED=1
    fi
    as_root env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
}
