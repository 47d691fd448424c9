#!/usr/bin/env bash
set -euo pipefail
target=${1:?usage: sign_and_notarize.sh PATH (.app, binary or .zip of them)}
identity=${CODESIGN_IDENTITY:-$(security find-identity -v -p codesigning | awk -F'"' '/Developer ID Application/ {print $2; exit}')}
[[ -n $identity ]] || { echo "no Developer ID Application identity in the keychain" >&2; exit 2; }
echo "signing with: $identity"
if [[ $target == *.zip ]]; then
  work=$(mktemp -d); trap 'rm -rf -- "$work"' EXIT
  ditto -x -k "$target" "$work"
  find "$work" -maxdepth 2 \( -name '*.app' -o -perm -u+x -type f \) -print0 |
    xargs -0 -I{} codesign --force --options runtime --timestamp --sign "$identity" {}
  (cd "$work" && ditto -c -k --keepParent . "$OLDPWD/$target")
else
  codesign --force --options runtime --timestamp --sign "$identity" "$target"
fi
xcrun notarytool submit "$target" --keychain-profile notary --wait
[[ $target == *.app ]] && xcrun stapler staple "$target"
spctl --assess --verbose "$target" || true
