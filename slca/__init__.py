"""slca: segment-locked credit assignment and efficient RL for tool-calling LLMs."""

__version__ = "0.1.0"
