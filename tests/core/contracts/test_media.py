"""Media values from bytes, a path or a URL; a URL-referenced value holds no bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit.core.contracts.media import Audio, File, Image

PNG = b"\x89PNG\r\n\x1a\n" + bytes(40)


def test_from_path_reads_the_bytes_and_the_type_from_the_extension(tmp_path: Path) -> None:
    (tmp_path / "chart.png").write_bytes(PNG)
    (tmp_path / "contract.pdf").write_bytes(b"%PDF-1.7")
    (tmp_path / "notes.txt").write_bytes(b"plain words")
    (tmp_path / "memo.wav").write_bytes(b"RIFF")
    assert Image.from_path(tmp_path / "chart.png") == Image(PNG, "image/png")
    assert File.from_path(tmp_path / "contract.pdf") == File(
        b"%PDF-1.7", "application/pdf", name="contract.pdf"
    )
    assert File.from_path(str(tmp_path / "notes.txt")) == File(
        b"plain words", "text/plain", name="notes.txt"
    )
    assert Audio.from_path(tmp_path / "memo.wav").mime_type in ("audio/x-wav", "audio/wav")


def test_an_image_of_unknown_type_needs_its_mime_type(tmp_path: Path) -> None:
    (tmp_path / "scan").write_bytes(PNG)
    with pytest.raises(ValueError) as info:
        Image.from_path(tmp_path / "scan")
    assert str(info.value) == (
        f"Image: cannot tell the media type of {str(tmp_path / 'scan')!r} from its "
        "extension; pass mime_type=, e.g. Image.from_path(path, mime_type='image/png')"
    )
    assert Image.from_path(tmp_path / "scan", mime_type="image/png").mime_type == "image/png"


def test_from_url_holds_the_url_and_no_bytes() -> None:
    photo = Image.from_url("https://example.com/harbour.jpg?size=large")
    assert (photo.data, photo.mime_type, photo.url) == (
        b"", "image/jpeg", "https://example.com/harbour.jpg?size=large"
    )
    assert photo.describe() == "[image: image/jpeg, https://example.com/harbour.jpg?size=large]"
    assert repr(photo) == (
        "Image(mime_type='image/jpeg', url='https://example.com/harbour.jpg?size=large', "
        "kind='image')"
    )
    assert repr(Image(PNG)) == "Image(mime_type='image/png', kind='image')"  # no bytes shown
    report = File.from_url("https://example.com/q3/report.pdf")
    assert report == File(b"", "application/pdf", name="report.pdf",
                          url="https://example.com/q3/report.pdf")
    assert report.describe() == (
        "[file report.pdf: application/pdf, https://example.com/q3/report.pdf]"
    )


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Image(url="file:///etc/passwd"),
         "Image.url must be an http(s) URL, got 'file:///etc/passwd'"),
        (lambda: Image(PNG, url="https://example.com/a.png"),
         "Image holds either bytes or a URL, not both: got 48 bytes and "
         "url='https://example.com/a.png'"),
        (lambda: File.from_url("https://example.com/x", mime_type="pdf"),
         "File.mime_type must be a MIME type such as 'image/png', got 'pdf'"),
    ],
)
def test_a_bad_media_value_says_what_is_accepted(build: object, message: str) -> None:
    with pytest.raises(ValueError) as info:
        build()  # type: ignore[operator]
    assert str(info.value) == message
