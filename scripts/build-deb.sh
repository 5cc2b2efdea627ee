#!/usr/bin/env bash
# `make deb`: pushgate_<version>_<arch>.deb from a release binary (scripts/release-build.sh:
# the Swift runtime linked statically, so the server needs no toolchain), with dpkg-deb and
# dpkg-shlibdeps alone (dpkg, dpkg-dev): no network, no debhelper.
#
# Usage: scripts/build-deb.sh [--binary PATH] [--version VERSION] [--output DIR]
#   --binary   the executable to package (default .build/release/pushgate)
#   --version  the package's version (default: PushgateVersion.current in the sources)
#   --output   the folder the .deb is written to (default: the repository's root)
# Prints the path of the package it wrote.
set -euo pipefail
cd "$(dirname "$0")/.."

binary=.build/release/pushgate
version=$(sed -n 's/^ *public static let current = "\([^"]*\)".*/\1/p' Sources/Gateway/PushgateVersion.swift)
output=.
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    --version) version=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    *) echo "build-deb.sh: unknown argument $1 (expected --binary PATH, --version VERSION or --output DIR)" >&2; exit 2 ;;
  esac
done
[ -x "$binary" ] || { echo "build-deb.sh: no executable at $binary (make release builds it)" >&2; exit 2; }
[[ "$version" =~ ^[0-9][A-Za-z0-9.+~-]*$ ]] || { echo "build-deb.sh: \"$version\" is not a Debian version" >&2; exit 2; }

arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# dpkg-shlibdeps wants the tree where debhelper would put it: debian/<package>/.
mkdir -p "$work/debian"
root=$work/debian/pushgate

# The files, each with its mode: nothing in the package is writable by anyone but root.
install -D -m 0755 "$binary" "$root/usr/bin/pushgate"
install -D -m 0644 packaging/gateway.json "$root/etc/pushgate/gateway.json"
install -m 0644 config/routes.json "$root/etc/pushgate/routes.json"
install -d -m 0755 "$root/etc/pushgate/templates"
install -m 0644 Templates/*.json "$root/etc/pushgate/templates/"
install -D -m 0644 packaging/default "$root/etc/default/pushgate"
install -D -m 0644 packaging/pushgate.service "$root/lib/systemd/system/pushgate.service"
install -D -m 0644 docs/install.md "$root/usr/share/doc/pushgate/install.md"
install -d -m 0755 "$root/usr/share/doc/pushgate/examples/campaigns"
install -m 0644 config/campaigns/*.json "$root/usr/share/doc/pushgate/examples/campaigns/"

# What the binary links, as Debian 12's packages with their minimum versions (from the
# libraries' symbols files); adduser for the postinst's system user.
printf 'Source: pushgate\n\nPackage: pushgate\nArchitecture: any\n' > "$work/debian/control"
shlibs=$(cd "$work" && dpkg-shlibdeps -O -e"debian/pushgate/usr/bin/pushgate" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { echo "build-deb.sh: dpkg-shlibdeps found no libraries for $binary" >&2; exit 1; }
rm "$work/debian/control"

mkdir -p "$root/DEBIAN"
install -m 0755 packaging/debian/postinst packaging/debian/prerm packaging/debian/postrm "$root/DEBIAN/"
# Every file under /etc: an upgrade never overwrites the operator's edits.
(cd "$root" && find etc -type f | sort | sed 's|^|/|') > "$root/DEBIAN/conffiles"
(cd "$root" && find usr lib etc -type f | sort | xargs md5sum) > "$root/DEBIAN/md5sums"
cat > "$root/DEBIAN/control" <<CONTROL
Package: pushgate
Version: $version
Architecture: $arch
Maintainer: pushgate developers <pushgate@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: adduser, $shlibs
Section: net
Priority: optional
Description: push-notification gateway for iOS apps
 pushgate sends campaigns and single notifications to Apple's push service
 (APNs) from templates and a deep-link route table, keeps a durable outbox
 in SQLite (or PostgreSQL), and serves an HTTP API. The package runs it as
 the systemd service pushgate.service, starting in dry run (nothing is sent
 to Apple) until the configuration in /etc/pushgate names a signing key.
CONTROL

mkdir -p "$output"
# gzip: 8.5 MB in ~4 s here; xz -6 made 6.1 MB in ~60 s on two busy cores, for every build.
deb="$output/pushgate_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zgzip --build "$root" "$deb" >/dev/null
echo "$deb"
