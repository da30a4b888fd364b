"""An index of each host's user corrections newest first (issue 10): a lesson page looks for corrections
on its topic among the host's ``TOPIC_WINDOW`` newest (``lessons.recurrence.lesson``) instead of every
correction of the host (430 ms at 190,000 corrections).
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('lessons', '0011_exposure_lesson_key_session'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='correction',
            index=models.Index(fields=['host', 'kind', 'corrected_at', 'id'], name='correction_newest'),
        ),
    ]
