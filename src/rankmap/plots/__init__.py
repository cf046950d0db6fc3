"""Pictures (matplotlib, drawn off-screen): link-load CDFs with plateau points, and more."""

__all__ = []
