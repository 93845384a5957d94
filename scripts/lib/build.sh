# Sourced by the scripts in scripts/: builds a module and the modules it uses (mvn package, tests skipped) when no
# script has built it yet, or when a main source file or a pom.xml changed since the last build, so that a script
# never runs classes older than the sources. Needs $root (the repository root).

# build_if_stale MODULE: builds MODULE if needed; on failure prints Maven's output and exits 1.
build_if_stale() {
  local module="$1"
  local stamp="$root/$module/target/.scripts-build-stamp"
  if [ -f "$stamp" ] && [ -z "$(find "$root" \( -name target -o -name .git -o -name node_modules \) -prune -o \
      \( -path '*/src/main/*' -o -name pom.xml \) -type f -newer "$stamp" -print -quit)" ]; then
    return 0
  fi
  echo "Building $module (mvn package, tests skipped; the first build takes a minute or two) ..." >&2
  local log
  log="$(mktemp)"
  # No javadoc or sources jar: the scripts run classes, and those jars are for publication (mvn verify builds them).
  if ! (cd "$root" && mvn -B -q -ntp -pl "$module" -am package -DskipTests -Dmaven.javadoc.skip=true \
      -Dmaven.source.skip=true) >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "The build failed (output above)." >&2
    exit 1
  fi
  rm -f "$log"
  touch "$stamp"
}
