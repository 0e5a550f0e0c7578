"""To-do: task lists and tasks with due dates, priorities, assignees, labels and subtasks.

Modelled on Todoist, Microsoft To Do and Google Tasks. Every workspace has an Inbox list (id
`inbox`), where tasks go when no list is named. A task is due on a date, or at a date-time; both are
read in the user's time zone unless they carry an offset, and `due_date` is always the local date.
Priorities use one scale, none < low < medium < high (Todoist's p1 is high, p4 none). A completed
task never has open subtasks: completing a task with open subtasks needs `include_subtasks`, and
reopening a subtask reopens its completed parents. `source` is free text saying where a task came
from, such as a mail message id or a ticket key. A task not completed is `open` (not started),
`in_progress` or `waiting` (on someone else), as Microsoft To Do's statuses; `set_task_status` moves it
between these and "open" in filters means any of them. Labels are free text in any script.
"""

from __future__ import annotations

from .records import (
    SERVICE, LISTS, TASKS, INBOX, UTC, Priority, Status, ActiveStatus, MAX_TITLE, MAX_TEXT, MAX_SOURCE, MAX_NAME,
    MAX_LABELS, MAX_QUERY, label_list, parse_due, TaskList, Task,
)
from .tools import (
    task_json, list_task_lists, create_task_list, sort_key, list_tasks, get_task,
    create_task, update_task, complete_task, reopen_task, set_task_status, delete_task, move_task
)

SERVICE.add_tools(
    list_task_lists, create_task_list, list_tasks, get_task, create_task, update_task, complete_task, reopen_task,
    set_task_status, delete_task, move_task,
)

__all__ = [
    "SERVICE", "LISTS", "TASKS", "task_json", "list_task_lists", "create_task_list", "sort_key", "list_tasks",
    "get_task", "create_task", "update_task", "complete_task", "reopen_task", "set_task_status", "delete_task",
    "move_task", "INBOX", "UTC", "Priority", "Status", "ActiveStatus", "MAX_TITLE", "MAX_TEXT", "MAX_SOURCE",
    "MAX_NAME", "MAX_LABELS", "MAX_QUERY", "label_list", "parse_due", "TaskList", "Task",
]
