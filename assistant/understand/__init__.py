"""Understanding a question: language, intent, parameters, follow-ups, retrieval text."""
from assistant.understand.understand import understand

__all__ = ["understand"]
