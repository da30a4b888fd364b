from django.urls import path

app_name = "review"
urlpatterns: list = []
