#!/usr/bin/env python3
"""Compiles every source boards/esp32's ESP-IDF projects build against ESP-IDF v5.5.5's real
public headers for the ESP32-C3, with Debian's riscv64-unknown-elf-g++ (compile only: -c, no
link), and checks the Kconfig names and component manifests those projects use (test
esp32_idf_compiles; boards/esp32/README.md says what this does and does not cover).

What each component compiles, with which include folders, definitions and options, is what its
CMakeLists.txt says: tests/esp32/check_project.cmake reads the example projects and their
components as ESP-IDF does and writes it out (EMCP_ESP32_COMPILE_LIST). What ESP-IDF adds to
every component (its flags, its global definitions, its include folders, sdkconfig.h) is below
and comes from the headers folder's MANIFEST and include-dirs.txt. Each source is compiled twice:

  idf   as ESP-IDF v5.5.5 builds it: ESP-IDF's options and warning flags for this sdkconfig,
        then the component's own options (-Wall -Wextra -Werror... for emcp and emcp_net), with
        ESP-IDF's headers on -I as ESP-IDF puts them (a warning inside one of them, in a file of
        a component built with -Werror, breaks the user's build), and -Werror for all;
  emcp  with emcp's own warnings (the component's options and emcp_flags', cmake/EmcpFlags.cmake:
        -Wconversion, -Wold-style-cast...), ESP-IDF's headers as system headers (their own
        casts and conversions are not emcp's to judge).

Any diagnostic fails: an error, and a warning that ESP-IDF's flags would leave a warning
(-Wno-error=deprecated-declarations...). A failure names the file, its component and project,
and shows the compiler's first lines. The headers folder is found in $EMCP_SHARED_DIR, else in
the shared/ folder the build was configured with; missing, the check fails (it never skips).

  idf_compile_check.py --source-dir REPO --shared-dir SHARED --cmake CMAKE --cxx G++
                       --emcp-flags 'FLAG|FLAG...' [--only FILE=COMPONENT ...]
--only compiles just FILE, as one more source of COMPONENT (of the first project that has it),
in both passes: the canaries that must be refused (tests/esp32/idf_wrong_*.cpp).
"""
import argparse
import concurrent.futures
import os
import re
import shlex
import subprocess
import sys
import tempfile

HEADERS = "third_party/esp-idf-v5.5.5-esp32c3-headers"

# ESP-IDF v5.5.5 for the ESP32-C3 with the headers' sdkconfig (CONFIG_COMPILER_OPTIMIZATION_DEBUG,
# no C++ exceptions nor RTTI, CONFIG_COMPILER_DISABLE_DEFAULT_ERRORS: no -Werror=all): its
# RISC-V arch (picolibc: CONFIG_LIBC_PICOLIBC, Debian's toolchain's C library), its C++
# standard, its build-wide options (tools/cmake/build.cmake) and definitions (the MANIFEST's).
ARCH = ["-march=rv32imc_zicsr_zifencei", "-mabi=ilp32", "--specs=picolibc.specs"]
IDF_OPTIONS = ["-std=gnu++2b", "-Og", "-fno-exceptions", "-fno-rtti", "-ffunction-sections",
               "-fdata-sections"]
IDF_WARNINGS = ["-Wall", "-Wno-error=unused-function", "-Wno-error=unused-variable",
                "-Wno-error=unused-but-set-variable", "-Wno-error=deprecated-declarations",
                "-Wextra", "-Wno-unused-parameter", "-Wno-sign-compare", "-Wno-enum-conversion"]
IDF_DEFINITIONS = ["-D_GNU_SOURCE", "-DESP_PLATFORM", '-DIDF_VER="v5.5.5"',
                   '-DMBEDTLS_CONFIG_FILE="mbedtls/esp_config.h"',
                   "-DSOC_MMU_PAGE_SIZE=CONFIG_MMU_PAGE_SIZE", "-DSOC_XTAL_FREQ_MHZ=CONFIG_XTAL_FREQ"]
# Not ESP-IDF's own copies (the MANIFEST: upstream lwIP 2.2.0 and Mbed TLS 3.6.6 stand in for
# Espressif's forks, which were not obtainable): their declarations judge emcp's calls, but a
# warning inside them says nothing of ESP-IDF's build (upstream lwIP's tcp_priv.h redefines
# TCP_FIN_WAIT_TIMEOUT and TCP_OOSEQ_TIMEOUT, which ESP-IDF's lwipopts.h sets: esp-lwip guards
# them). System headers in both passes; the search order is unchanged (no header of theirs is
# shadowed by a folder after them).
SUBSTITUTES = ("components/lwip/lwip/src/include", "components/mbedtls/mbedtls/include")
FIRST_LINES = 25
# Debian's riscv64-unknown-elf toolchain has no C++ library, ESP-IDF's has GCC's libstdc++: the
# two headers emcp's code includes from it are the boards' own stand-ins (boards/common/cxx),
# as on the other bare-metal boards. The only headers of the check that are not ESP-IDF's.
CXX_LIBRARY = "boards/common/cxx"

# The idf_component.yml fields the component manager (ESP-IDF 5.x) reads: its manifest reference.
MANIFEST_FIELDS = {"version", "description", "url", "repository", "documentation", "issues",
                   "discussion", "license", "maintainers", "tags", "targets", "dependencies",
                   "files", "examples", "require", "repository_info"}
IDF_TARGETS = {"esp32", "esp32s2", "esp32s3", "esp32c2", "esp32c3", "esp32c5", "esp32c6",
               "esp32c61", "esp32h2", "esp32p4", "linux"}


def fail(message):
    print(f"idf_compile_check: FAILED: {message}")
    sys.exit(1)


def find_headers(configured):
    from_env = os.environ.get("EMCP_SHARED_DIR")
    shared = from_env or configured
    where = "$EMCP_SHARED_DIR" if from_env else "the shared/ folder this build was configured with"
    path = os.path.join(shared, HEADERS)
    if not os.path.isfile(os.path.join(path, "include-dirs.txt")):
        fail(f"ESP-IDF v5.5.5's headers for the ESP32-C3 are not in {path} ({where}: {shared}). "
             f"They are part of the shared/ folder beside the checkout ({HEADERS}): set "
             "EMCP_SHARED_DIR to the shared/ folder that has them, or configure with "
             "-DEMCP_SHARED_DIR=...")
    return os.path.realpath(path)


def read_components(args, list_file):
    """[(project, component, folder, sources, includes, definitions, options)] from the
    CMakeLists."""
    run = subprocess.run([args.cmake, f"-DEMCP_SOURCE_DIR={args.source_dir}",
                          f"-DEMCP_ESP32_COMPILE_LIST={list_file}", "-P",
                          os.path.join(args.source_dir, "tests/esp32/check_project.cmake")],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if run.returncode != 0:
        print(run.stdout)
        fail("tests/esp32/check_project.cmake could not read boards/esp32's projects (above)")
    rows = []
    with open(list_file) as fh:
        for line in fh:
            project, component, folder, *lists = line.rstrip("\n").split("\t")
            rows.append((project, component, folder, *[[x for x in f.split(";") if x] for f in lists]))
    if not rows:
        fail("tests/esp32/check_project.cmake found no component")
    return rows


def jobs_for(rows, root, headers, emcp_flags, only):
    """One job per source, pass and set of flags (the emcp component's sources are the same in
    both projects: compiled once)."""
    idf_dirs = [os.path.join(headers, d) for d in open(os.path.join(headers, "include-dirs.txt")).read().split()]
    config = os.path.join(headers, "config/full")  # kconfgen's whole sdkconfig.h
    jobs, seen = [], set()
    for project, component, _, sources, includes, definitions, options in rows:
        if only is not None:
            if component not in only:
                continue
            sources = only.pop(component)
        own = [f"-I{d}" for d in includes] + [f"-D{d}" for d in definitions]
        for name in ("idf", "emcp"):
            if name == "idf":
                esp = ["-isystem" + d if d.endswith(SUBSTITUTES) else f"-I{d}" for d in idf_dirs]
                flags = IDF_OPTIONS + IDF_WARNINGS + options + ["-Werror"]
            else:
                esp = [f"-isystem{d}" for d in idf_dirs]
                flags = IDF_OPTIONS + options + emcp_flags + ["-Werror"]
            # sdkconfig.h first (ESP-IDF's build-wide folder), the components' folders, ESP-IDF's.
            command = (ARCH + flags + IDF_DEFINITIONS + [f"-I{config}"] + own + esp +
                       ["-isystem", os.path.join(root, CXX_LIBRARY)])
            for src in sources:
                key = (name, src, tuple(command))
                if key not in seen:
                    seen.add(key)
                    jobs.append({"pass": name, "source": src, "component": component,
                                 "project": project, "command": command})
    if only:
        fail(f"no project has the component(s) {', '.join(only)} (--only)")
    return jobs


def compile_one(cxx, job, out_dir, index):
    obj = os.path.join(out_dir, f"{index}.o")
    command = [cxx] + job["command"] + ["-c", job["source"], "-o", obj, "-MMD", "-MF", obj + ".d"]
    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    job["output"] = run.stdout.strip()
    job["ok"] = run.returncode == 0 and not job["output"]
    job["deps"] = obj + ".d"
    job["argv"] = command
    return job


def local_files(job, root):
    """The files under the checkout that `job` read (its source and the headers it included)."""
    with open(job["deps"]) as fh:
        text = fh.read().replace("\\\n", " ")
    names = text.split(":", 1)[1].split() if ":" in text else []
    return {os.path.realpath(n) for n in names if os.path.realpath(n).startswith(root + os.sep)}


def sdkconfig_values(headers):
    values = {}
    with open(os.path.join(headers, "config/full/sdkconfig.h")) as fh:
        for line in fh:
            m = re.match(r"#define (CONFIG_\w+) (.*)$", line.strip())
            if m:
                values[m.group(1)] = m.group(2)
    return values


def check_kconfig(files, projects, root, values):
    """Every CONFIG_ name emcp's code or an example's sdkconfig.defaults names is one kconfgen
    knows for v5.5.5 (a name absent from its output: unknown, or a bool that is off there), and
    each value a sdkconfig.defaults sets is the one kconfgen wrote (the headers' sdkconfig.h was
    generated from sensors_net's sdkconfig.defaults)."""
    problems, names = [], set()
    for path in sorted(files):
        with open(path, errors="replace") as fh:
            for number, line in enumerate(fh, 1):
                for name in re.findall(r"\bCONFIG_[A-Z0-9_]+\b", line):
                    names.add(name)
                    if name not in values:
                        problems.append(f"{os.path.relpath(path, root)}:{number}: {name} is not in "
                                        "ESP-IDF v5.5.5's sdkconfig.h for this configuration")
    for project in sorted(projects):
        defaults = os.path.join(project, "sdkconfig.defaults")
        if not os.path.exists(defaults):
            continue
        with open(defaults) as fh:
            for number, line in enumerate(fh, 1):
                m = re.match(r"\s*(CONFIG_\w+)=(.*)$", line)
                if not m:
                    continue
                name, value = m.group(1), m.group(2).strip()
                names.add(name)
                where = f"{os.path.relpath(defaults, root)}:{number}"
                if value == "n":
                    continue  # kconfgen leaves an off bool out of sdkconfig.h: nothing to compare
                want = "1" if value == "y" else value
                if name not in values:
                    problems.append(f"{where}: {name} is no Kconfig option of ESP-IDF v5.5.5 "
                                    "(kconfgen's sdkconfig.h does not have it)")
                elif values[name] != want:
                    problems.append(f"{where}: {name}={value}, but kconfgen's sdkconfig.h in the headers "
                                    f"folder has {values[name]} (rejected, or the headers were made "
                                    "from another sdkconfig.defaults: regenerate them)")
    print(f"idf_compile_check: Kconfig: {len(names)} CONFIG_ names ({', '.join(sorted(names))}) in the "
          f"{len(files)} files of the checkout the sources read and in the sdkconfig.defaults")
    return problems


def check_manifests(rows, root):
    """Each component's idf_component.yml as the component manager of ESP-IDF 5.x reads it."""
    import yaml  # python3-yaml (scripts/lib.sh's BASE_PACKAGES)
    problems = []
    # The components the projects add (EXTRA_COMPONENT_DIRS: check_project.cmake requires their
    # manifests); the projects' main components have none.
    dirs = {row[2] for row in rows if os.path.exists(os.path.join(row[2], "idf_component.yml"))}
    for d in sorted(dirs):
        path = os.path.join(d, "idf_component.yml")
        where = os.path.relpath(path, root)
        try:
            with open(path) as fh:
                manifest = yaml.safe_load(fh)
        except yaml.YAMLError as e:
            problems.append(f"{where}: not YAML: {e}")
            continue
        if not isinstance(manifest, dict):
            problems.append(f"{where}: not a mapping")
            continue
        for key in sorted(set(manifest) - MANIFEST_FIELDS):
            problems.append(f"{where}: {key} is no field of idf_component.yml")
        version = manifest.get("version")
        if version is not None and not re.fullmatch(r"\d+\.\d+\.\d+(~\d+)?([-+][0-9A-Za-z.-]+)?", str(version)):
            problems.append(f"{where}: version {version!r} is not MAJOR.MINOR.PATCH")
        for target in manifest.get("targets") or []:
            if target not in IDF_TARGETS:
                problems.append(f"{where}: target {target!r} is no ESP-IDF target")
        idf = (manifest.get("dependencies") or {}).get("idf")
        spec = idf.get("version") if isinstance(idf, dict) else idf
        if not isinstance(spec, str) or not re.fullmatch(r"\s*(>=|>|\^|~|==|<=|<)?\s*5(\.\d+)*\s*(,.*)?", spec):
            problems.append(f"{where}: dependencies.idf must be a version range within ESP-IDF 5 "
                            f"(\">=5.0\"), not {idf!r}")
    if not dirs:
        problems.append("no component has an idf_component.yml")
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--shared-dir", required=True)
    parser.add_argument("--cmake", required=True)
    parser.add_argument("--cxx", required=True)
    parser.add_argument("--emcp-flags", required=True, help="emcp_flags' options, |-separated")
    parser.add_argument("--only", action="append", help="FILE=COMPONENT")
    args = parser.parse_args()
    root = os.path.realpath(args.source_dir)
    headers = find_headers(args.shared_dir)
    specs = subprocess.run([args.cxx, "-print-file-name=picolibc.specs"], stdout=subprocess.PIPE, text=True)
    if not os.path.isabs(specs.stdout.strip()):
        fail(f"{args.cxx} has no picolibc.specs: install picolibc-riscv64-unknown-elf")
    only = None
    if args.only:
        only = {}
        for item in args.only:
            path, component = item.rsplit("=", 1)
            only.setdefault(component, []).append(os.path.realpath(path))
    emcp_flags = [f for f in args.emcp_flags.split("|") if f]

    with tempfile.TemporaryDirectory() as out_dir:
        rows = read_components(args, os.path.join(out_dir, "components.tsv"))
        jobs = jobs_for(rows, root, headers, emcp_flags, only)
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
            done = list(pool.map(lambda ij: compile_one(args.cxx, ij[1], out_dir, ij[0]), enumerate(jobs)))
        failed = [j for j in done if not j["ok"]]
        for job in failed:
            where = "as ESP-IDF builds it" if job["pass"] == "idf" else "with emcp's own warnings"
            print(f"== FAILED {os.path.relpath(job['source'], root)} (component {job['component']} of "
                  f"{os.path.relpath(job['project'], root)}, {where}): the compiler's first lines:")
            print("\n".join(job["output"].splitlines()[:FIRST_LINES]))
        if failed:
            print(f"\n== to run the first by hand:\n{shlex.join(failed[0]['argv'])}")
        files = set()
        for job in done:
            if job["pass"] == "idf" and os.path.exists(job["deps"]):
                files |= local_files(job, root)
    problems = [] if only is not None else (
        check_kconfig(files, {r[0] for r in rows}, root, sdkconfig_values(headers)) + check_manifests(rows, root))
    for p in problems:
        print(f"== {p}")
    files_compiled = {j["source"] for j in done}
    per_pass = sum(1 for j in done if j["pass"] == "idf")
    print(f"idf_compile_check: {len(files_compiled)} files, {per_pass} compiles per pass (a file two "
          f"components build with other definitions counts twice), {len(done)} in all (as ESP-IDF "
          f"v5.5.5 builds them, and with emcp's warnings) against {headers}: {len(failed)} failed")
    if failed or problems:
        fail(f"{len(failed)} compile(s), {len(problems)} other problem(s): above")
    print("idf_compile_check: passed")


if __name__ == "__main__":
    main()
