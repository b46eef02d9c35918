"""Planning: the user's numbers and the kb's sizing rules become a validated recommendation."""
from assistant.planner.recommend import plan

__all__ = ["plan"]
