"""Regenerates every artefact derived from proto/: the Python stubs of the client
package, the descriptor set Envoy's JSON transcoder loads, what `buf generate` writes for
the other clients (buf.gen.yaml; each plugin has its own `out` folder), and the OpenAPI
document Envoy serves (protoc-gen-openapiv2's, corrected where Envoy differs: ADR 0109).

Run it through `make generate`; never edit its outputs by hand. `make check-generated`
runs it into a scratch directory and fails when the committed outputs differ.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import google.api
import grpc_tools
import yaml
from grpc_tools import protoc

from shellexec.app.openapi_document import corrected, render

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PYTHON_OUT = ROOT / "clients" / "python"
DESCRIPTOR_OUT = ROOT / "envoy" / "shellexec.pb"
GENERATED_PACKAGE = PYTHON_OUT / "shellexec" / "v1"
BUF = ROOT / ".tools" / "node_modules" / ".bin" / "buf"
# The root template generates the clients from proto/; the TypeScript client's own template
# adds the google.rpc error details it decodes, which are no part of the contract.
BUF_TEMPLATES = (ROOT / "buf.gen.yaml", ROOT / "clients" / "typescript" / "buf.gen.yaml")
# Plugin outputs under .build/ are steps, not committed code: the uncorrected OpenAPI document
# becomes OPENAPI_OUT.
SCRATCH_OUTPUTS = ".build/"
OPENAPI_GENERATED = Path(".build/openapi/shellexec.swagger.json")
OPENAPI_OUT = Path("docs/openapi.json")


def _googleapis_include() -> Path:
    # google/api/*.proto ship inside the googleapis-common-protos wheel.
    return Path(next(iter(google.api.__path__))).parent.parent


# The error details the server sends (ADR 0060): Envoy's transcoder renders an error's
# `grpc-status-details-bin` into the JSON body only for messages its descriptor holds.
ERROR_DETAIL_PROTOS = ("google/rpc/error_details.proto", "google/rpc/status.proto")


def _proto_files() -> list[str]:
    return sorted(str(path.relative_to(PROTO_ROOT)) for path in PROTO_ROOT.rglob("*.proto"))


def _protoc(*args: str) -> None:
    include = (f"--proto_path={PROTO_ROOT}", f"--proto_path={_googleapis_include()}",
               f"--proto_path={Path(grpc_tools.__file__).parent / '_proto'}")
    if protoc.main(["grpc_tools.protoc", *include, *args]) != 0:
        sys.exit("protoc failed")


def generate(python_out: Path, descriptor_out: Path) -> None:
    package_dir = python_out / "shellexec" / "v1"
    shutil.rmtree(package_dir, ignore_errors=True)
    package_dir.mkdir(parents=True)
    _protoc(f"--python_out={python_out}", f"--pyi_out={python_out}",
            f"--grpc_python_out={python_out}", *_proto_files())
    # Separately: the google.rpc messages go into Envoy's descriptor, not into Python stubs
    # (googleapis-common-protos has those).
    _protoc(f"--descriptor_set_out={descriptor_out}", "--include_imports",
            "--include_source_info", *_proto_files(), *ERROR_DETAIL_PROTOS)
    docstring = '"""Generated from proto/shellexec/v1 by `make generate`; do not edit."""\n'
    (package_dir / "__init__.py").write_text(docstring)


def buf_outputs() -> list[str]:
    """The `out` folder of every plugin of the buf templates, relative to the root."""
    outputs = [plugin["out"] for template in BUF_TEMPLATES
               for plugin in yaml.safe_load(template.read_text())["plugins"]
               if not plugin["out"].startswith(SCRATCH_OUTPUTS)]
    return list(dict.fromkeys(outputs))  # two plugins may share a folder


def buf_generate(base: Path) -> None:
    """Runs every buf template with its `out` folders under `base` (the root, or scratch)."""
    for template in BUF_TEMPLATES:
        subprocess.run([str(BUF), "generate", "--template", str(template), "--output",
                        str(base)], cwd=ROOT, check=True)
    generated = json.loads((base / OPENAPI_GENERATED).read_text())
    (base / OPENAPI_OUT).parent.mkdir(parents=True, exist_ok=True)
    (base / OPENAPI_OUT).write_text(render(corrected(generated)))


def _generated_files(root: Path) -> set[Path]:
    # Only what protoc writes: byte-code caches beside the stubs are not generated code.
    return {path.relative_to(root) for path in root.rglob("*")
            if path.is_file() and "__pycache__" not in path.parts}


def _same_tree(left: Path, right: Path) -> list[str]:
    names = _generated_files(left) | _generated_files(right)
    return sorted(
        str(n) for n in names
        if not (left / n).is_file() or not (right / n).is_file()
        or (left / n).read_bytes() != (right / n).read_bytes()
    )


def check() -> int:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        generate(out, out / "shellexec.pb")
        stale = _same_tree(out / "shellexec" / "v1", GENERATED_PACKAGE)
        if (out / "shellexec.pb").read_bytes() != DESCRIPTOR_OUT.read_bytes():
            stale.append(str(DESCRIPTOR_OUT.relative_to(ROOT)))
        buf_generate(out / "buf")
        stale += [f"{folder}/{name}" for folder in buf_outputs()
                  for name in _same_tree(out / "buf" / folder, ROOT / folder)]
        if (out / "buf" / OPENAPI_OUT).read_bytes() != (ROOT / OPENAPI_OUT).read_bytes():
            stale.append(str(OPENAPI_OUT))
    if stale:
        print("generated code is stale; run `make generate`:", *stale, sep="\n  ")
        return 1
    print("generated code is up to date")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when outputs are stale")
    if parser.parse_args().check:
        return check()
    generate(PYTHON_OUT, DESCRIPTOR_OUT)
    buf_generate(ROOT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
